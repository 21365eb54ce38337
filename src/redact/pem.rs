//! Private keys in PEM form: whole blocks, blocks cut off at the end (a
//! line range that stops inside), and blocks cut off at the start (a range or
//! a diff hunk that begins inside, so only the body and the END line remain).
//!
//! Hand-written rather than a regex: a block is many lines, its body may be
//! JSON-escaped (`\n` inside a service-account file) or diff-prefixed (`+`),
//! and the cut-at-the-start case has to walk backwards from the END line.

#[cfg(test)]
use memchr::memmem;

const BEGIN: &str = "-----BEGIN ";
const END: &str = "-----END ";
const DASHES: &str = "-----";

/// The label after BEGIN/END names a private key (`RSA PRIVATE KEY`,
/// `OPENSSH PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`).
fn private_label(after: &str) -> Option<usize> {
    let n = after
        .bytes()
        .take_while(|b| {
            b.is_ascii_uppercase() || b.is_ascii_digit() || matches!(b, b' ' | b'_' | b'-')
        })
        .count();
    // The label runs up to the closing dashes, which the scan above swallowed.
    let label = after[..n].trim_end_matches('-');
    let closes = after[label.len()..].starts_with(DASHES);
    (closes && (label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK")))
        .then_some(label.len() + DASHES.len())
}

/// Whether a line opens a private-key block (used by `--file PATH:A-B` to
/// see that line A lies inside one).
pub fn begins(line: &str) -> bool {
    line.find(BEGIN)
        .is_some_and(|i| private_label(&line[i + BEGIN.len()..]).is_some())
}

/// Whether a line closes a PEM block.
pub fn ends(line: &str) -> bool {
    line.contains(END)
}

/// Byte ranges of every private key in `text`.
#[cfg(test)]
pub fn find(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let begins: Vec<usize> = memmem::find_iter(b, BEGIN.as_bytes()).collect();
    let ends: Vec<usize> = memmem::find_iter(b, END.as_bytes()).collect();
    find_at(text, &begins, &ends)
}

/// Byte ranges of every private key in `text`, given where its BEGIN and END
/// lines start (`-----BEGIN `, `-----END `, each in order; the redactor's
/// keyword pass finds them, so the text is not searched again here).
pub fn find_at(text: &str, begins: &[usize], ends: &[usize]) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut covered = 0;
    for &at in begins {
        if at < covered {
            continue;
        }
        let Some(head) = private_label(&text[at + BEGIN.len()..]) else {
            continue;
        };
        let body = at + BEGIN.len() + head;
        // Without an END line the rest of the text goes: a cut-off key is
        // still a key.
        let end = match ends.get(ends.partition_point(|&e| e < body)) {
            Some(&rel) => {
                let e = rel + END.len();
                text[e..]
                    .find(DASHES)
                    .map_or(text.len(), |r| e + r + DASHES.len())
            }
            None => text.len(),
        };
        spans.push((at, end));
        covered = end;
    }
    for &at in ends {
        if spans.iter().any(|&(s, e)| at >= s && at < e) {
            continue;
        }
        let Some(tail) = private_label(&text[at + END.len()..]) else {
            continue;
        };
        let start = body_start(text, at);
        // A lone END line gives nothing away.
        if at - start >= 16 {
            spans.push((start, at + END.len() + tail));
        }
    }
    spans.sort_unstable();
    spans
}

fn base64ish(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Where the body of a block whose BEGIN line is missing starts: walk back
/// from its END line over base64 (and JSON `\n` escapes) on the same line,
/// then over whole lines of base64 or PEM headers (`Proc-Type:`, `DEK-Info:`).
fn body_start(text: &str, end_at: usize) -> usize {
    let b = text.as_bytes();
    let mut s = end_at;
    while s > 0 && (base64ish(b[s - 1]) || b[s - 1] == b'\\') {
        s -= 1;
    }
    let mut line_start = text[..end_at].rfind('\n').map_or(0, |p| p + 1);
    // Stopped mid-line (`"k": "MIIE…\n-----END`): the body starts there.
    if s > line_start + lead(&text[line_start..end_at]) {
        return s;
    }
    let mut first = true;
    while line_start > 0 {
        let line_end = line_start - 1;
        let prev_start = text[..line_end].rfind('\n').map_or(0, |p| p + 1);
        let line = text[prev_start..line_end].trim_end_matches('\r');
        let lead = lead(line);
        let core = &line[lead..];
        let body = !core.is_empty() && core.bytes().all(base64ish) && (first || core.len() >= 16);
        let header = ["Proc-Type:", "DEK-Info:", "Comment:", "Version:"]
            .iter()
            .any(|h| core.starts_with(h));
        let blank_after_header = core.is_empty() && !first && header_above(text, prev_start);
        if !(body || header || blank_after_header) {
            break;
        }
        s = prev_start + lead;
        line_start = prev_start;
        first = false;
    }
    s
}

/// A diff marker and indentation before a body line: they stay.
fn lead(line: &str) -> usize {
    let marker = usize::from(line.starts_with(['+', '-']));
    marker
        + line[marker..]
            .bytes()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count()
}

fn header_above(text: &str, line_start: usize) -> bool {
    if line_start == 0 {
        return false;
    }
    let prev_end = line_start - 1;
    let prev_start = text[..prev_end].rfind('\n').map_or(0, |p| p + 1);
    let prev = text[prev_start..prev_end].trim_start_matches(['+', ' ', '\t']);
    prev.starts_with("DEK-Info:") || prev.starts_with("Proc-Type:")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\nLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n";

    fn text_of(t: &str, spans: &[(usize, usize)]) -> Vec<String> {
        spans.iter().map(|&(s, e)| t[s..e].to_string()).collect()
    }

    #[test]
    fn whole_open_and_cut_blocks() {
        let whole =
            format!("a\n-----BEGIN RSA PRIVATE KEY-----\n{BODY}-----END RSA PRIVATE KEY-----\nb");
        let got = text_of(&whole, &find(&whole));
        assert_eq!(got.len(), 1);
        assert!(got[0].starts_with("-----BEGIN") && got[0].ends_with("KEY-----"));

        let open = format!("x\n-----BEGIN OPENSSH PRIVATE KEY-----\n{BODY}");
        assert_eq!(find(&open), vec![(2, open.len())]);

        // A range that starts inside the block: body lines, then END.
        let cut = format!("{BODY}-----END PRIVATE KEY-----\nafter");
        assert_eq!(
            text_of(&cut, &find(&cut)),
            vec![cut[..cut.len() - 6].to_string()]
        );

        // Prose above the body stays.
        let cut = format!("The key:\n{BODY}-----END EC PRIVATE KEY-----");
        assert_eq!(find(&cut), vec![(9, cut.len())]);

        // Diff hunk starting inside: the `+` markers stay, the body goes.
        let diff = format!(
            "@@ -0,0 +1,4 @@\n{}+-----END RSA PRIVATE KEY-----\n",
            BODY.lines().map(|l| format!("+{l}\n")).collect::<String>()
        );
        let spans = find(&diff);
        assert_eq!(spans.len(), 1);
        assert_eq!(&diff[spans[0].0..spans[0].0 + 4], "MIIE");

        // JSON-escaped, as in a GCP service-account file.
        let json = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n", "x": 1}"#;
        let got = text_of(json, &find(json));
        assert!(
            got[0].starts_with("-----BEGIN") && got[0].ends_with("KEY-----"),
            "{got:?}"
        );
        // … and the same cut at the start.
        let json = r#"{"k": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#;
        assert_eq!(
            text_of(json, &find(json)),
            vec![r"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"]
        );
    }

    #[test]
    fn public_material_and_lone_lines_stay() {
        for t in [
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END CERTIFICATE-----",
            "-----END RSA PRIVATE KEY-----",
            "see below\n-----END RSA PRIVATE KEY-----",
        ] {
            assert!(find(t).is_empty(), "{t}");
        }
        assert!(begins("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
        assert!(!begins("-----BEGIN CERTIFICATE-----"));
        assert!(ends("-----END RSA PRIVATE KEY-----"));
    }
}
