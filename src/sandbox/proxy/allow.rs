//! Which hosts the proxy lets through: a host and port a client names,
//! normalised once (lower case, no trailing dot, IPv6 without brackets),
//! checked against rules written `host[:port]` or `*.domain[:port]`.
//!
//! A rule without a port allows 443 and 80 (the two a provider's API is
//! reached on); a client's target always has one (CONNECT must say it, an
//! absolute `http://` URI defaults to 80).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Where a client wants to go.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    /// Lower case, no trailing dot; an IPv6 literal without brackets.
    pub host: String,
    pub port: u16,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl Target {
    /// `host:port` or `[v6]:port` (CONNECT's authority form); without a
    /// port, `default` if there is one.
    pub fn parse(authority: &str, default: Option<u16>) -> Result<Target, String> {
        let (host, port) = split_authority(authority)?;
        let port = match (port, default) {
            (Some(p), _) => p,
            (None, Some(d)) => d,
            (None, None) => return Err(format!("`{authority}` names no port")),
        };
        Ok(Target {
            host: normalise_host(host)?,
            port,
        })
    }
}

/// One allowed destination.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rule {
    /// Normalised; `*.example.com` allows every name below example.com
    /// (not example.com itself).
    pub host: String,
    /// `None`: 443 and 80.
    pub port: Option<u16>,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(p) => write!(f, "{host}:{p}"),
            None => f.write_str(&host),
        }
    }
}

impl Rule {
    /// `host[:port]`, `[v6][:port]` or `*.domain[:port]`, as the user writes
    /// it (`--network-host`, config `run.network_hosts`). The one place such
    /// a value is checked.
    pub fn parse(s: &str) -> Result<Rule, String> {
        let s = s.trim();
        let (wild, rest) = match s.strip_prefix("*.") {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (host, port) = split_authority(rest)?;
        let host = normalise_host(host)?;
        if wild && (host.contains(':') || host.parse::<Ipv4Addr>().is_ok() || !host.contains('.')) {
            return Err(format!(
                "`{s}`: a wildcard needs a domain with a dot (`*.example.com`)"
            ));
        }
        Ok(Rule {
            host: if wild { format!("*.{host}") } else { host },
            port,
        })
    }

    pub fn allows(&self, t: &Target) -> bool {
        let port = match self.port {
            Some(p) => p == t.port,
            None => t.port == 443 || t.port == 80,
        };
        let host = match self.host.strip_prefix("*.") {
            Some(domain) => t
                .host
                .strip_suffix(domain)
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            None => self.host == t.host,
        };
        port && host
    }
}

/// The rules of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    pub rules: Vec<Rule>,
}

impl Allowlist {
    pub fn new(mut rules: Vec<Rule>) -> Allowlist {
        rules.sort();
        rules.dedup();
        Allowlist { rules }
    }

    pub fn allows(&self, t: &Target) -> bool {
        self.rules.iter().any(|r| r.allows(t))
    }
}

/// `host[:port]` or `[v6][:port]`: the host as written and the port.
fn split_authority(s: &str) -> Result<(&str, Option<u16>), String> {
    let bad = || format!("`{s}` is not a host[:port]");
    let port = |p: &str| -> Result<u16, String> {
        match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(format!("`{s}`: `{p}` is not a port (1-65535)")),
        }
    };
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        if !host.contains(':') {
            return Err(format!("`{s}`: only an IPv6 address goes in brackets"));
        }
        return match after {
            "" => Ok((host, None)),
            _ => Ok((host, Some(port(after.strip_prefix(':').ok_or_else(bad)?)?))),
        };
    }
    match s.split_once(':') {
        // A bare IPv6 literal has several colons and no port.
        Some(_) if s.matches(':').count() > 1 => Ok((s, None)),
        Some((host, p)) => Ok((host, Some(port(p)?))),
        None => Ok((s, None)),
    }
}

/// Lower case, one trailing dot dropped; a name of letters, digits, `-`
/// and `.`, an IPv4 or an IPv6 address. Anything else (spaces, `@`, `/`,
/// percent signs) is refused, so a target can never be read two ways.
fn normalise_host(host: &str) -> Result<String, String> {
    let h = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if h.contains(':') {
        return h
            .parse::<Ipv6Addr>()
            .map(|a| a.to_string())
            .map_err(|_| format!("`{host}` is not an IPv6 address"));
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    if h.is_empty() || h.len() > 253 || !h.split('.').all(label_ok) {
        return Err(format!("`{host}` is not a host name"));
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Target {
        Target::parse(s, None).unwrap()
    }

    #[test]
    fn case_and_a_trailing_dot_do_not_make_another_host() {
        let r = Rule::parse("API.Example.COM.").unwrap();
        assert_eq!(r.to_string(), "api.example.com");
        assert!(r.allows(&t("api.example.com:443")));
        assert!(r.allows(&t("Api.Example.Com.:443")));
        assert!(!r.allows(&t("api.example.com.evil.net:443")));
        assert!(!r.allows(&t("evilapi.example.com:443")));
    }

    #[test]
    fn a_rule_without_a_port_allows_443_and_80_only() {
        let r = Rule::parse("api.example.com").unwrap();
        assert!(r.allows(&t("api.example.com:443")));
        assert!(r.allows(&t("api.example.com:80")));
        assert!(!r.allows(&t("api.example.com:22")));
        let p = Rule::parse("127.0.0.1:8080").unwrap();
        assert!(p.allows(&t("127.0.0.1:8080")));
        assert!(!p.allows(&t("127.0.0.1:8081")));
        assert!(!p.allows(&t("127.0.0.1:443")));
    }

    #[test]
    fn ipv6_literals_compare_as_addresses() {
        let r = Rule::parse("[::1]:9000").unwrap();
        assert_eq!(r.host, "::1");
        assert!(r.allows(&t("[0:0:0:0:0:0:0:1]:9000")));
        assert!(!r.allows(&t("[::2]:9000")));
        assert_eq!(t("[::1]:9000").to_string(), "[::1]:9000");
        let bare = Rule::parse("fe80::1").unwrap();
        assert_eq!((bare.host.as_str(), bare.port), ("fe80::1", None));
        assert!(Rule::parse("[::1").is_err());
        assert!(Rule::parse("[::1]x").is_err());
        assert!(Rule::parse("[nothost]:1").is_err());
    }

    #[test]
    fn wildcards_cover_subdomains_only() {
        let r = Rule::parse("*.githubcopilot.com").unwrap();
        assert!(r.allows(&t("api.githubcopilot.com:443")));
        assert!(r.allows(&t("a.b.githubcopilot.com:443")));
        assert!(!r.allows(&t("githubcopilot.com:443")));
        assert!(!r.allows(&t("evilgithubcopilot.com:443")));
        assert!(Rule::parse("*.com").is_err());
        assert!(Rule::parse("*.1.2.3.4").is_err());
    }

    #[test]
    fn junk_is_refused() {
        for bad in [
            "",
            "a b",
            "user@host",
            "host/path",
            "host:0",
            "host:65536",
            "host:+1",
            "host:",
            "-x.com",
            "x..com",
            "%41.com",
            "host:1:2x",
        ] {
            assert!(Rule::parse(bad).is_err(), "{bad}");
        }
        assert!(Target::parse("example.com", None).is_err());
        assert_eq!(Target::parse("example.com", Some(80)).unwrap().port, 80);
    }
}
