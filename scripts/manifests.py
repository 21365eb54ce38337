#!/usr/bin/env python3
"""Keep every plugin manifest in step with one source of truth.

Sources (edit these):
  Cargo.toml [package]            version, description, license, repository
  plugin/.claude-plugin/plugin.json  name, author, homepage, keywords
  plugin/.codex-plugin/plugin.json   skills, interface (Codex-only fields)
  LICENSE                         the license text

Generated from them (never edit by hand; `sync` rewrites, `check` compares):
  - version in plugin/.claude-plugin/plugin.json, plugin/.codex-plugin/plugin.json,
    .claude-plugin/marketplace.json (plugins[].version, metadata.version) and
    package.json; description, license and repository likewise;
  - the Codex plugin.json's shared fields (name, author, homepage, keywords)
    copied from the Claude plugin.json;
  - the plugin name in both marketplaces, the Pi package's keywords;
  - plugin/LICENSE, a copy of LICENSE (the Claude catalog wants one beside
    the plugin);
  - the repository URL the shim (plugin/bin/baton) names in its install hint;
  - gemini-extension.json (the Gemini CLI extension: name, version,
    description) and skills/peer/SKILL.md, the skill as the extension ships
    it: plugin/skills/peer/SKILL.md with its "Finding the binary" section
    pointing at the shim through gemini's `${extensionPath}` (gemini reads an
    extension's skills from <extension root>/skills only).

Usage: scripts/manifests.py sync [VERSION] | check
  sync VERSION also sets Cargo.toml's (and Cargo.lock's) package version first.
Exit: 0 in step / written; 1 when check finds a difference (each is listed).
"""

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_PLUGIN = "plugin/.claude-plugin/plugin.json"
CODEX_PLUGIN = "plugin/.codex-plugin/plugin.json"
CLAUDE_MARKET = ".claude-plugin/marketplace.json"
CODEX_MARKET = ".agents/plugins/marketplace.json"
PI_PACKAGE = "package.json"
SHIM = "plugin/bin/baton"
SKILL = "plugin/skills/peer/SKILL.md"
GEMINI_EXTENSION = "gemini-extension.json"
GEMINI_SKILL = "skills/peer/SKILL.md"
SKILL_SECTION = "## Finding the binary\n"
GEMINI_FINDING = """## Finding the binary
Use the first that works:
1. `$BATON_BIN`, if set (a baton binary the user chose);
2. `baton` on PATH (`cargo install` puts it in `~/.cargo/bin`);
3. the shim shipped with this extension: `${extensionPath}/plugin/bin/baton`.

The shim picks the prebuilt binary for the platform. Exit 3 with `error.kind` `unsupported_platform` means there is none: tell the user the install hint it printed.

"""
SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")


def read_json(rel):
    return json.loads((ROOT / rel).read_text())


def dump_json(value):
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def cargo_package():
    return tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]


def expected():
    """Every generated file's expected text, keyed by path."""
    pkg = cargo_package()
    version, desc = pkg["version"], pkg["description"]
    lic, repo = pkg["license"], pkg["repository"]
    out = {}

    claude = read_json(CLAUDE_PLUGIN)
    claude.update(version=version, description=desc, repository=repo, license=lic)
    out[CLAUDE_PLUGIN] = dump_json(claude)

    codex_own = read_json(CODEX_PLUGIN)
    codex = {
        "name": claude["name"],
        "version": version,
        "description": desc,
        "author": claude["author"],
        "homepage": claude["homepage"],
        "repository": repo,
        "license": lic,
        "keywords": claude["keywords"],
        "skills": codex_own.get("skills", "./skills/"),
        "interface": codex_own.get("interface", {}),
    }
    out[CODEX_PLUGIN] = dump_json(codex)

    market = read_json(CLAUDE_MARKET)
    market.setdefault("metadata", {})["version"] = version
    for entry in market["plugins"]:
        entry.update(name=claude["name"], version=version, description=desc)
    out[CLAUDE_MARKET] = dump_json(market)

    cmarket = read_json(CODEX_MARKET)
    for entry in cmarket["plugins"]:
        entry["name"] = claude["name"]
    out[CODEX_MARKET] = dump_json(cmarket)

    pi = read_json(PI_PACKAGE)
    keywords = list(dict.fromkeys(["pi-package"] + claude["keywords"]))
    first = {
        "name": pi.get("name", claude["name"]),
        "version": version,
        "description": desc,
        "license": lic,
        "repository": {"type": "git", "url": f"git+{repo}.git"},
        "keywords": keywords,
    }
    out[PI_PACKAGE] = dump_json({**first, **{k: v for k, v in pi.items() if k not in first}})

    out["plugin/LICENSE"] = (ROOT / "LICENSE").read_text()

    out[GEMINI_EXTENSION] = dump_json(
        {"name": claude["name"], "version": version, "description": desc}
    )
    out[GEMINI_SKILL] = gemini_skill((ROOT / SKILL).read_text())

    shim = (ROOT / SHIM).read_text()
    out[SHIM] = re.sub(r"(?m)^REPO=.*$", f"REPO={repo}", shim, count=1)
    return out


def gemini_skill(text):
    """SKILL.md with its binary-finding section made for the gemini extension."""
    start = text.index(SKILL_SECTION)
    end = text.index("\n## ", start + len(SKILL_SECTION)) + 1
    return text[:start] + GEMINI_FINDING + text[end:]


def set_cargo_version(version):
    if not SEMVER.match(version):
        sys.exit(f"manifests: `{version}` is not a version like 1.2.3")
    toml = ROOT / "Cargo.toml"
    text = toml.read_text()
    # Only the [package] table's version (the first `version =` line).
    text = re.sub(r'(?m)^version = "[^"]*"', f'version = "{version}"', text, count=1)
    toml.write_text(text)
    lock = ROOT / "Cargo.lock"
    name = cargo_package()["name"]
    text = lock.read_text()
    text, n = re.subn(
        rf'(\[\[package\]\]\nname = "{re.escape(name)}"\nversion = )"[^"]*"',
        rf'\1"{version}"',
        text,
    )
    if n != 1:
        sys.exit(f"manifests: could not find package {name} in Cargo.lock")
    lock.write_text(text)


def main(argv):
    if not argv or argv[0] not in ("sync", "check") or (argv[0] == "check" and len(argv) > 1):
        sys.exit("usage: scripts/manifests.py sync [VERSION] | check")
    if argv[0] == "sync":
        if len(argv) > 1:
            set_cargo_version(argv[1])
        for rel, text in expected().items():
            path = ROOT / rel
            current = path.read_text() if path.exists() else None
            if current != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                mode = path.stat().st_mode if path.exists() else None
                path.write_text(text)
                if mode is not None:
                    path.chmod(mode)
                print(f"manifests: wrote {rel}")
        print(f"manifests: every manifest says {cargo_package()['version']}")
        return 0

    bad = []
    version = cargo_package()["version"]
    for rel, text in expected().items():
        path = ROOT / rel
        if not path.exists():
            bad.append(f"{rel}: missing")
        elif path.read_text() != text:
            bad.append(f"{rel}: differs from what scripts/manifests.py sync writes")
    # Spell out version drift, the common case, field by field.
    for rel, getter in [
        (CLAUDE_PLUGIN, lambda j: [j.get("version")]),
        (CODEX_PLUGIN, lambda j: [j.get("version")]),
        (CLAUDE_MARKET, lambda j: [j.get("metadata", {}).get("version")] + [p.get("version") for p in j["plugins"]]),
        (PI_PACKAGE, lambda j: [j.get("version")]),
        (GEMINI_EXTENSION, lambda j: [j.get("version")]),
    ]:
        for found in getter(read_json(rel)):
            if found != version:
                bad.append(f"{rel}: version {found!r}, Cargo.toml says {version!r}")
    if bad:
        for line in bad:
            print(f"manifests: {line}", file=sys.stderr)
        print("manifests: run `scripts/sync-version.sh` (and commit) to bring them in step", file=sys.stderr)
        return 1
    print(f"manifests: all in step with Cargo.toml (version {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
