//! Credential-like paths (`credential_reason`): keys, tokens and `.env` files
//! are refused outright, by name, before their contents are ever read.

use std::path::{Component, Path};

use crate::error::{Error, Result};

/// Why a path looks like it holds credentials, if it does. Every component
/// is looked at, so `a/../.ssh/x` (checked after canonicalisation) and a
/// symlink into `~/.aws` are caught like the plain paths.
pub fn credential_reason(path: &Path) -> Option<String> {
    let names: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_lowercase()),
            _ => None,
        })
        .collect();
    for (i, n) in names.iter().enumerate() {
        if let Some(d) = [".ssh", ".aws", ".gnupg", ".codex", ".claude"]
            .iter()
            .find(|d| **d == n.as_str())
        {
            return Some(format!("it is under `{d}`, where credentials are kept"));
        }
        if n == ".config" && names.get(i + 1).is_some_and(|g| g == "gcloud") {
            return Some("it is under `.config/gcloud`, where credentials are kept".into());
        }
    }
    let name = names.last()?;
    let why = if name.starts_with(".env") {
        "`.env` files hold secrets"
    } else if name.ends_with(".pem") || name.ends_with(".key") {
        "`.pem`/`.key` files hold keys and certificates"
    } else if ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        "it is an SSH key"
    } else if matches!(
        name.as_str(),
        ".netrc" | ".npmrc" | ".pypirc" | ".git-credentials" | "auth.json"
    ) {
        "it holds login tokens"
    } else if name == ".pgpass" {
        "it holds PostgreSQL passwords"
    } else if name == ".htpasswd" {
        "it holds password hashes"
    } else if name.ends_with(".tfstate") || name.ends_with(".tfstate.backup") {
        // Terraform writes every resource's attributes into its state in
        // clear, generated passwords (`random_password`) included.
        "Terraform state holds the secrets of the resources it manages"
    } else if name.starts_with("credentials") {
        "it holds credentials"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// A file that is a credential file under another name (a hard link).
pub(super) fn check_hardlink(given: &str, path: &Path, project: &Path) -> Result<()> {
    match super::credential_guard::hardlinked_credential(path, project) {
        None => Ok(()),
        Some((other, why)) => Err(Error::Refused {
            kind: "credential_file",
            message: format!(
                "refusing to read `{given}`: it is a hard link to `{}`, and {why}; \
                 credential-like files are never sent to an adviser",
                other.display()
            ),
            hint: "leave the file out; describe what matters about it in words instead".into(),
        }),
    }
}

/// Text piped on stdin that has the shape of a credential file.
pub fn check_stdin_content(text: &str, what: &str) -> Result<()> {
    match super::credential_guard::credential_content(text) {
        None => Ok(()),
        Some(why) => Err(Error::Refused {
            kind: "credential_file",
            message: format!(
                "refusing to send {what} read from stdin: {why}; credential-like content is \
                 never sent to an adviser"
            ),
            hint: "pipe something else; describe what matters about the settings in words \
                   instead"
                .into(),
        }),
    }
}

pub(super) fn check_credential(given: &str, path: &Path) -> Result<()> {
    match credential_reason(path) {
        None => Ok(()),
        Some(why) => {
            let resolved = if path == Path::new(given) {
                String::new()
            } else {
                format!(" (resolves to {})", path.display())
            };
            Err(Error::Refused {
                kind: "credential_file",
                message: format!(
                    "refusing to read `{given}`{resolved}: {why}; credential-like files are never \
                     sent to an adviser"
                ),
                hint: "leave the file out; describe what matters about it in words instead".into(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_paths_are_recognised() {
        let refused = [
            ".env",
            "app/.env.local",
            "certs/server.pem",
            "tls/private.KEY",
            "home/u/.ssh/config",
            "id_rsa",
            "id_ed25519.pub",
            ".netrc",
            "web/.npmrc",
            "auth.json",
            "credentials",
            "gcp/credentials.json",
            "u/.aws/config",
            "u/.gnupg/pubring.kbx",
            "u/.codex/config.toml",
            "u/.claude/settings.json",
            "u/.config/gcloud/application_default_credentials.json",
            ".pgpass",
            "home/u/.pgpass",
            "site/.htpasswd",
            "infra/terraform.tfstate",
            "infra/terraform.tfstate.backup",
            "envs/prod.TFSTATE",
            "infra/.terraform/terraform.tfstate",
        ];
        for p in refused {
            assert!(credential_reason(Path::new(p)).is_some(), "{p}");
        }
        let allowed = [
            "src/env.rs",
            "environment.md",
            "keys.rs",
            "src/key_value.rs",
            "docs/ssh.md",
            "u/.config/nvim/init.lua",
            "my_credentials_doc.md",
            "package.json",
            "README",
            "docs/pgpass.md",
            "htpasswd.rs",
            "infra/main.tf",
            "infra/terraform.tfvars.example",
            "src/tfstate_reader.rs",
        ];
        for p in allowed {
            assert_eq!(credential_reason(Path::new(p)), None, "{p}");
        }
    }
}
