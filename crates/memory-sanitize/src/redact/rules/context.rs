//! Generic forms: a credential found by its context (a key name, a header, a flag, a URL) rather
//! than by its shape.

use super::{Action, Check, Family, Near, Rule, ValueEnd, quote, token, value_chars};

const F: Family = Family::Context;

/// Names of a password, secret key or token in other languages, as they are written (the
/// keyword search ignores only ASCII case, so Cyrillic is listed in its three cases).
const OTHER_LANGUAGE_SECRET_NAMES: &[&str] = &[
    "密码",
    "口令",
    "密钥",
    "秘钥",
    "令牌",
    "パスワード",
    "暗証番号",
    "비밀번호",
    "암호",
    "пароль",
    "Пароль",
    "ПАРОЛЬ",
    "wachtwoord",
    "hasło",
    "haslo",
    "heslo",
    "lösenord",
    "losenord",
    "salasana",
    "şifre",
    "sifre",
    "jelszó",
    "jelszo",
    "passord",
    "adgangskode",
    "mot de passe",
];

/// Words whose presence in a key name may make it secret (see `assignment.rs` for the exact
/// judgement of a name).
const SECRET_WORDS: &[&str] = &[
    "pass", "pwd", "secret", "token", "cred", "key", "auth", "priv", "session", "cookie",
    "contrase", "senha",
];

pub(super) const RULES: &[Rule] = &[
    Rule {
        action: Action::Assignment,
        near: Near::Assignment,
        word_start: false,
        secret_group: 5,
        back: 64,
        forward: 64,
        ..token(
            "generic-assignment",
            F,
            "A key whose name says password, secret, token, credential, API/access/private key \
             (any prefix or suffix: `STRIPE_SECRET_KEY`, `x-api-key`, `dbPass`) assigned a \
             literal in env files, shell, YAML, TOML, INI, JSON, Python dicts, code, HTTP headers \
             or XML attributes: unquoted, quoted (spaces included), on the next line, as a YAML \
             block, or a quoted value spanning lines. Names that only may hold a secret (`*_key`, \
             `auth`, `private`, `session`) need a value that looks generated",
            "gitleaks:generic-api-key, gitleaks:database-password, gitleaks:hashicorp-tf-password, \
             detect-secrets:KeywordDetector, detect-secrets:Base64HighEntropyString, \
             detect-secrets:HexHighEntropyString",
            SECRET_WORDS,
            concat!(
                r"(?i)(?:^|[^A-Za-z0-9_.\x80-\xFF-])([A-Za-z0-9_.\x80-\xFF-]{1,80})",
                quote!(),
                r"[ \t]*(:=|::=|=>|===|!==|==|!=|\?=|=|:)[ \t]*",
                quote!(),
                r#"([^\s"'`]*)"#
            ),
            "`API_KEY=` + value, `\"token\": \"` + value + `\"`, `password: |` + indented lines",
            "(API_KEY=|export GITHUB_TOKEN=|db_password: |\"client_secret\": \"|secret_key = '|PASSWORD=|dbPass: )[a-z]{4}[0-9]{4}[A-Za-z0-9]{4,20}",
        )
    },
    Rule {
        action: Action::Authorization,
        near: Near::Assignment,
        word_start: false,
        secret_group: 4,
        back: 8,
        forward: 64,
        ..token(
            "authorization-header",
            F,
            "`Authorization` / `Proxy-Authorization` header with any scheme: `Basic`, `Bearer` \
             (letters-only tokens too), `Token`, `Bot`, `Digest` (its `response`), \
             `AWS4-HMAC-SHA256` (its `Signature`), `OAuth` and `Hawk` (their signatures), or a \
             bare credential",
            "gitleaks:curl-auth-header",
            &["authorization"],
            concat!(
                r"(?i)(?:^|[^A-Za-z0-9_-])((?:proxy-)?authorization)",
                quote!(),
                r"[ \t]*[:=][ \t]*",
                quote!(),
                r"(?:[A-Za-z][A-Za-z0-9_-]{0,24}[ \t]+)?([A-Za-z0-9._~+/=:-]{8,})"
            ),
            "`Authorization: Basic ` + base64, `Authorization: Token ` + token",
            "Authorization: (Basic|Bearer|Token|Bot) [A-Za-z]{16,40}",
        )
    },
    Rule {
        secret_group: 1,
        check: Check::Bearer,
        ..token(
            "bearer-token",
            F,
            "Bearer token anywhere (`Bearer ` + 16 or more token characters, letters only too)",
            "ours",
            &["bearer"],
            r"(?i)bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)",
            "`Bearer ` + 16 or more letters, digits, `.`, `_`, `~`, `+`, `/`, `-`",
            "Bearer [A-Za-z]{8}[A-Za-z0-9._~+/-]{8,40}",
        )
    },
    Rule {
        secret_group: 1,
        check: Check::BasicCredentials,
        ..token(
            "basic-auth-credentials",
            F,
            "`Basic ` + base64 of `user:password` anywhere (a header value outside a header)",
            "ours",
            &["basic"],
            r"(?i)basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?:[^A-Za-z0-9+/=]|\z)",
            "`Basic ` + base64 of `user:password`",
            "Basic (dXNlcjpodW50ZXIy|YWRtaW46czNjcjN0|Ym9iOmNvcnJlY3Rob3JzZQ==)",
        )
    },
    Rule {
        secret_group: 1,
        back: 24,
        forward: 200,
        check: Check::EmbeddedPassword,
        value_end: ValueEnd::Blank,
        ..token(
            "url-credentials",
            F,
            "Password in a URL of any scheme (`postgres://user:password@host`, \
             `amqp://`, `redis://:password@`, `https://user:token@`)",
            "detect-secrets:BasicAuthDetector, gitleaks:sidekiq-sensitive-url",
            &["://"],
            r#"(?i)[a-z][a-z0-9+.-]{1,20}://[^\s:/@"'\\\[\]<>]{0,64}:([^\s/"'\\\[\]<>]{3,128})@"#,
            "`postgres://user:` + password + `@host/db`",
            "(postgres|mysql|mongodb\\+srv|redis|amqp|https)://[a-z]{3,10}:[A-Za-z0-9!*_-]{8,24}@[a-z]{3,10}\\.example\\.com",
        )
    },
    Rule {
        secret_group: 1,
        back: 24,
        forward: 160,
        check: Check::UrlUserToken,
        value_end: ValueEnd::Blank,
        ..token(
            "url-token-userinfo",
            F,
            "A generated token as the user name of a URL (`https://<token>@github.com/...`)",
            "ours",
            &["://"],
            r"(?i)[a-z][a-z0-9+.-]{1,20}://([A-Za-z0-9._~%+-]{16,128})@[A-Za-z0-9]",
            "`https://` + 16 or more random characters + `@host`",
            "https://[a-z]{6}[0-9]{6}[A-Za-z0-9]{20}@git\\.example\\.com/repo\\.git",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        back: 16,
        check: Check::EmbeddedPassword,
        value_end: ValueEnd::Blank,
        ..token(
            "connection-string-password",
            F,
            "`Password=` field of a semicolon-separated connection string (ADO.NET, ODBC, JDBC)",
            "ours",
            &["password=", "pwd="],
            r#"(?i);[ \t]*(?:password|pwd)=([^;\s"'\\\[\](){}<>]{1,128})"#,
            "`Server=db;User Id=app;Password=` + password + `;`",
            "Server=db;User Id=app;Password=[a-z]{2}[0-9]{2}[A-Za-z0-9!*_-]{4,20};",
        )
    },
    Rule {
        near: Near::Flag,
        word_start: false,
        secret_group: 3,
        back: 64,
        forward: 24,
        check: Check::FlagValue,
        ..token(
            "cli-flag",
            F,
            "Secret passed as a command-line flag (`--password=...`, `--token ...`, `--api-key ...`)",
            "ours",
            &[
                "password",
                "passwd",
                "token",
                "secret",
                "passphrase",
                "secret-key",
                "secret_key",
                "api-key",
                "api_key",
                "apikey",
                "access-key",
                "access_key",
                "private-key",
                "private_key",
            ],
            concat!(
                r#"(?i)(?:^|[\s"'=])--?((?:[a-z0-9]+[-_]){0,4}(?:password|passwd|passphrase|secret[-_]key|token|secret|api[-_]?key|access[-_]key|private[-_]key|auth[-_]token|client[-_]secret))(?:=|[ \t]+)"#,
                quote!(),
                "(",
                value_chars!(),
                r"{6,})"
            ),
            "`--password=` + value, `--token ` + value",
            "(--password=|--token |--api-key |--db-password )[a-z]{4}[0-9]{3}[A-Za-z0-9!*_-]{4,20}",
        )
    },
    Rule {
        word_start: false,
        secret_group: 2,
        check: Check::NotPlaceholder,
        value_end: ValueEnd::Blank,
        ..token(
            "curl-user-password",
            F,
            "`user:password` given to `curl -u` / `--user` (and other tools' `-u`)",
            "gitleaks:curl-auth-user",
            &["-u ", "-u=", "--user ", "--user="],
            r#"(?:^|\s)(?:-u|--user)(?:[ \t]+|=)["']?([^\s:"'$<{]{1,64}):([^\s"']{3,128})"#,
            "`curl -u user:` + password",
            "curl -u (admin|bob|deploy):[A-Za-z]{4}[0-9]{4}[A-Za-z0-9!*_-]{0,12} https://example\\.com",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        forward: 240,
        check: Check::NotPlaceholder,
        ..token(
            "mysql-cli-password",
            F,
            "Password glued to `-p` on a `mysql` / `mysqldump` / `mariadb` command line",
            "ours",
            &["mysql", "mariadb"],
            r#"(?i)(?:mysql|mysqldump|mysqladmin|mariadb)[^\r\n]{0,200}?[ \t]-p([^\s"'-][^\s"']{2,127})"#,
            "`mysql -u root -p` + password",
            "mysql -u root -p[A-Za-z]{4}[0-9]{4} -h db",
        )
    },
    Rule {
        word_start: false,
        secret_group: 2,
        back: 48,
        check: Check::SameTag,
        ..token(
            "xml-secret-element",
            F,
            "XML element whose tag names a secret (`<password>...</password>`, Maven \
             `settings.xml`, Spring, .NET config)",
            "detect-secrets:KeywordDetector",
            &[
                "password>",
                "passwd>",
                "secret>",
                "token>",
                "apikey>",
                "api-key>",
                "api_key>",
                "accesskey>",
                "credential>",
                "passphrase>",
            ],
            r"(?i)<([A-Za-z0-9_.:-]{0,40}(?:password|passwd|passphrase|secret|token|apikey|api-key|api_key|accesskey|secretkey|privatekey|credential))>([^<>\s]{4,256})</([A-Za-z0-9_.:-]{1,60})>",
            "`<password>` + value + `</password>`",
            "<password>[A-Za-z]{4}[0-9]{4}[A-Za-z0-9!#%]{0,16}</password>",
        )
    },
    Rule {
        word_start: false,
        secret_group: 3,
        forward: 192,
        check: Check::FlagValue,
        ..token(
            "secret-named-in-another-language",
            F,
            "A value after a password, secret key or token named in Chinese, Japanese, Korean, \
             Russian or another language (`密码：...`, `数据库密码=...`, `パスワードは...`, \
             `비밀번호: ...`, `пароль=...`, `wachtwoord: ...`), with an ASCII or full-width colon \
             or equals sign or the word for \"is\" (`是`, `为`, `は`, `는`) between them. The value is \
             the run of printable ASCII after it, so the sentence that goes on after it stays",
            "ours",
            OTHER_LANGUAGE_SECRET_NAMES,
            concat!(
                "(?:密码|口令|密钥|秘钥|令牌|パスワード|暗証番号|비밀번호|암호|пароль|Пароль|ПАРОЛЬ",
                "|wachtwoord|hasło|haslo|heslo|lösenord|losenord|salasana|şifre|sifre|jelszó|jelszo",
                "|passord|adgangskode|mot de passe)",
                quote!(),
                r"[ \t]*(?::|=|：|＝|是|为|為|は|는|은)[ \t]*",
                quote!(),
                r#"([^\s"'`\x80-\xFF]{4,128})"#
            ),
            "`密码：` + value, `пароль=` + value",
            "(密码：|数据库密码=|パスワードは|비밀번호: |пароль=|wachtwoord: )[a-z]{4}[0-9]{4}[A-Za-z0-9!#%]{0,12}",
        )
    },
    Rule {
        word_start: false,
        secret_group: 2,
        forward: 160,
        check: Check::ProseValue,
        ..token(
            "password-in-prose",
            F,
            "A password stated in an English sentence (`the staging password is Hunter2024!`, \
             `my passphrase was ...`): the word after `is` or `was`, when it holds a digit, a \
             symbol or a capital after its first letter, so `the password is incorrect` and \
             `if password is None` stay",
            "ours",
            &["password", "passphrase", "passwd", "passcode"],
            concat!(
                r"(?i)(?:^|[^A-Za-z0-9_])(?:password|passphrase|passwd|passcode)[ \t]+(?:is|was)[ \t]+",
                quote!(),
                r#"([^\s"'`]{3,127}[^\s"'`.,;:!?)\]}])"#
            ),
            "`the password is ` + value",
            "(the password is |my passphrase was |DB password is )[A-Za-z]{4}[0-9]{4}[A-Za-z0-9!#%]{0,12}",
        )
    },
];
