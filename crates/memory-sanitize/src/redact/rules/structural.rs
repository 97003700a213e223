//! Keys, tokens and documents recognized by their structure.

use super::{Action, Family, Near, Rule, token};

const F: Family = Family::Structural;

pub(super) const RULES: &[Rule] = &[
    Rule {
        word_start: false,
        action: Action::PrivateKey,
        back: 128,
        ..token(
            "private-key",
            F,
            "PEM or SSH2 private key block (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP), also \
             when cut off; the body ends at the first line that cannot belong to it",
            "gitleaks:private-key, detect-secrets:PrivateKeyDetector",
            &[
                "private key-----",
                "private key block-----",
                "private key ----",
            ],
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|---- BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY ----",
            "`-----BEGIN RSA PRIVATE KEY-----` ... `-----END RSA PRIVATE KEY-----`",
            "-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----\n([A-Za-z0-9+/]{64}\n){3,8}[A-Za-z0-9+/]{1,63}=?\n-----END (RSA |EC |OPENSSH )?PRIVATE KEY-----",
        )
    },
    Rule {
        word_start: false,
        action: Action::BodyLines,
        ..token(
            "putty-private-key",
            F,
            "PuTTY private key (the lines after `Private-Lines:`)",
            "detect-secrets:PrivateKeyDetector",
            &["private-lines:"],
            r"Private-Lines:[ \t]*[0-9]{1,3}",
            "`Private-Lines: 14` + base64 lines",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n[A-Za-z0-9+/]{44}\n",
        )
    },
    token(
        "jwt",
        F,
        "JSON Web Token (header and payload, with or without signature)",
        "gitleaks:jwt, detect-secrets:JwtTokenDetector",
        &["eyj"],
        r"eyJ[A-Za-z0-9_-]{10,}={0,2}\.eyJ[A-Za-z0-9_-]{10,}={0,2}(?:\.[A-Za-z0-9_-]*={0,2})?",
        "`eyJ...` `.` `eyJ...` `.` signature (base64url)",
        "eyJ[A-Za-z0-9_-]{20,40}\\.eyJ[A-Za-z0-9_-]{20,80}\\.[A-Za-z0-9_-]{20,43}",
    ),
    token(
        "jwt-base64",
        F,
        "Base64-encoded JSON Web Token",
        "gitleaks:jwt-base64",
        &["zxlk"],
        r"ZXlK[A-Za-z0-9+/_-]{60,}={0,2}",
        "`ZXlK` + 60 or more base64 characters",
        "ZXlKaGJHY2lPaUpJVXpJMU5pSjk[A-Za-z0-9+/]{60,80}",
    ),
    token(
        "age-secret-key",
        F,
        "age encryption secret key",
        "gitleaks:age-secret-key",
        &["age-secret-key-1"],
        r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
        "`AGE-SECRET-KEY-1` + 58 upper-case letters and digits",
        "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    Rule {
        word_start: false,
        action: Action::Kubernetes,
        near: Near::Assignment,
        forward: 24,
        ..token(
            "kubernetes-secret",
            F,
            "Values of the `data:` / `stringData:` block of a Kubernetes `Secret` manifest (YAML \
             or JSON)",
            "gitleaks:kubernetes-secret-yaml",
            &["kind"],
            r#"(?i)\\?["']?kind\\?["']?[ \t]*:[ \t]*\\?["']?Secret\b"#,
            "`kind: Secret` ... `data:` + indented `name: base64` lines",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  username: [a-z]{2}[0-9]{2}[A-Za-z0-9]{4}\n  dbcred: [A-Za-z0-9+/]{24}==\n",
        )
    },
];
