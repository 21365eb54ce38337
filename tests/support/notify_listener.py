"""A notification server for tests: owns org.freedesktop.Notifications on
the session bus in DBUS_SESSION_BUS_ADDRESS and appends every Notify call
to the file in argv[1] as one JSON line; touches argv[1] + ".ready" once it
owns the name. Needs Debian's python3-dbus and python3-gi."""

import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

OUT = sys.argv[1]


class Server(dbus.service.Object):
    def __init__(self, bus):
        name = dbus.service.BusName("org.freedesktop.Notifications", bus)
        super().__init__(name, "/org/freedesktop/Notifications")
        self.next_id = 0

    @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, timeout):
        self.next_id += 1
        with open(OUT, "a", encoding="utf-8") as f:
            f.write(json.dumps({"app_name": str(app_name), "summary": str(summary), "body": str(body)}) + "\n")
        return dbus.UInt32(self.next_id)

    @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("baton-test", "baton", "1", "1.2")

    @dbus.service.method("org.freedesktop.Notifications", in_signature="u", out_signature="")
    def CloseNotification(self, _id):
        pass


DBusGMainLoop(set_as_default=True)
server = Server(dbus.SessionBus())
open(OUT + ".ready", "w").close()
GLib.MainLoop().run()
