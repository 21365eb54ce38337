//! Splitting a command line into argv words as a POSIX shell would for a
//! simple command, for the places that take a command as one string but run it without a shell.

/// Split a command into words as a POSIX shell would for a simple command
/// (whitespace, quotes, backslashes), refusing everything that needs a
/// shell to mean what it says: pipes, lists, redirections, expansions,
/// globs, subshells and `VAR=value` prefixes.
pub fn split(s: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("an unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\')) => cur.push(x),
                            Some(x @ ('$' | '`')) => {
                                return Err(format!("`\\{x}` inside double quotes"));
                            }
                            Some(x) => {
                                cur.push('\\');
                                cur.push(x);
                            }
                            None => return Err("an unclosed double quote".into()),
                        },
                        Some(x @ ('$' | '`')) => {
                            return Err(format!("`{x}` (an expansion) inside double quotes"));
                        }
                        Some(x) => cur.push(x),
                        None => return Err("an unclosed double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(x) => {
                    in_word = true;
                    cur.push(x);
                }
                None => return Err("a trailing backslash".into()),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' | '\n' => {
                return Err(format!("`{}` needs a shell", c.escape_default()));
            }
            '~' if !in_word => return Err("`~` needs a shell".into()),
            '#' if !in_word => return Err("`#` (a comment) needs a shell".into()),
            x => {
                in_word = true;
                cur.push(x);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    match words.first() {
        None => Err("the command is empty".into()),
        Some(w)
            if w.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            }) =>
        {
            Err(format!("`{w}` sets a variable, which needs a shell"))
        }
        Some(_) => Ok(words),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split(s).unwrap()
    }

    #[test]
    fn simple_commands_split_as_a_shell_would() {
        assert_eq!(
            words("cargo test --lib  parse"),
            ["cargo", "test", "--lib", "parse"]
        );
        assert_eq!(
            words(r#"pytest -k 'a and b' "x y" z\ w"#),
            ["pytest", "-k", "a and b", "x y", "z w"]
        );
        assert_eq!(words(r#"echo "a\"b" '' x=1"#), ["echo", "a\"b", "", "x=1"]);
        assert_eq!(words("make test#1"), ["make", "test#1"]);
        assert_eq!(words("cmd 'a|b;c>$d'"), ["cmd", "a|b;c>$d"]);
    }

    #[test]
    fn what_needs_a_shell_is_refused() {
        for (cmd, why) in [
            ("make test | tee log", "`|`"),
            ("make && make test", "`&`"),
            ("make; rm -rf /", "`;`"),
            ("make > out", "`>`"),
            ("echo $HOME", "`$`"),
            ("echo `id`", "needs a shell"),
            ("echo \"$(id)\"", "expansion"),
            ("ls *.rs", "`*`"),
            ("(cd x)", "`(`"),
            ("ls ~/x", "`~`"),
            ("FOO=1 make", "sets a variable"),
            ("echo 'open", "unclosed single"),
            ("echo \"open", "unclosed double"),
            ("make\nrm x", "needs a shell"),
            ("   ", "empty"),
            ("# comment", "comment"),
        ] {
            let e = split(cmd).unwrap_err();
            assert!(e.contains(why), "{cmd:?}: {e}");
        }
    }
}
