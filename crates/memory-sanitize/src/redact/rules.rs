//! The secret rules.
//!
//! Provider-token shapes follow the gitleaks default configuration (MIT licence,
//! <https://github.com/gitleaks/gitleaks>, `config/gitleaks.toml`); each such rule names the
//! gitleaks rule it follows in `source`. The regexes here are written for this crate (ASCII
//! semantics, `regex::bytes`), not copied. Rules marked `ours` are original.
//!
//! Conventions every rule keeps, so redaction stays idempotent and windowed scanning stays exact:
//! - a secret value never starts with `[`, and the characters the values may contain are never
//!   [`super::is_stop_byte`] bytes, so the redaction marker cannot be matched again and a value
//!   always ends at a stop byte (the scanning window extends to one);
//! - no rule uses `$`; the end of text is written `\z`;
//! - no rule starts with `\b`: [`Rule::word_start`] does that job and also accepts a JSON escape
//!   (`\nghp_...`) before the match.

use super::{Check, Near};

/// One secret rule.
pub(crate) struct Rule {
    pub(crate) id: &'static str,
    pub(crate) description: &'static str,
    /// `gitleaks:<rule id>` for shapes taken from gitleaks, `ours` otherwise.
    pub(crate) source: &'static str,
    /// Lower-case literals; the rule runs only near one of them (matched case-insensitively).
    pub(crate) keywords: &'static [&'static str],
    pub(crate) pattern: &'static str,
    /// Capture group replaced by the marker (0: the whole match).
    pub(crate) secret_group: usize,
    pub(crate) check: Check,
    /// The match must start at a word start: after a byte that is not a letter, digit or `_`,
    /// or after a JSON escape such as `\n` (which a regex `\b` would not see as a boundary).
    pub(crate) word_start: bool,
    /// What must be next to a keyword hit for the rule's regex to be worth running.
    pub(crate) near: Near,
    /// Bytes before a keyword where a match may start.
    pub(crate) back: usize,
    /// Bytes after a keyword the match may need before its value (the window then extends to the
    /// next stop byte).
    pub(crate) forward: usize,
    /// The shape of a match, for the documentation (never a real secret).
    pub(crate) shape: &'static str,
    /// A regex generating text this rule must redact (used by the property tests).
    pub(crate) sample: &'static str,
}

/// The value characters of context rules: printable ASCII except quotes, backslash,
/// brackets, braces, parentheses, angle brackets, comma, semicolon, `&` and whitespace.
macro_rules! value_chars {
    () => {
        r"[A-Za-z0-9!#$%*+./:=?@^_|~-]"
    };
}

/// A quote as written in text, in JSON, or in JSON inside JSON (escaped up to three times).
macro_rules! quote {
    () => {
        r#"(\\{0,7}["'])?"#
    };
}

/// Key names that hold secrets in assignments (`API_KEY=`, `"token":`, `password:`).
macro_rules! secret_key_names {
    () => {
        r"password|passwd|passphrase|secret|secret[_-]?key|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key|credentials?"
    };
}

const fn token(
    id: &'static str,
    description: &'static str,
    source: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    shape: &'static str,
    sample: &'static str,
) -> Rule {
    Rule {
        id,
        description,
        source,
        keywords,
        pattern,
        secret_group: 0,
        check: Check::Always,
        word_start: true,
        near: Near::Anything,
        back: 0,
        forward: 16,
        shape,
        sample,
    }
}

pub(crate) const RULES: &[Rule] = &[
    // ----- AI providers -----
    token(
        "openai-project-key",
        "OpenAI project API key",
        "gitleaks:openai-api-key",
        &["sk-proj-"],
        r"sk-proj-[A-Za-z0-9_-]{20,}",
        "`sk-proj-` + 20 or more letters, digits, `_`, `-`",
        "sk-proj-[A-Za-z0-9_-]{40,80}",
    ),
    token(
        "openai-service-key",
        "OpenAI service-account or admin key",
        "gitleaks:openai-api-key",
        &["sk-svcacct-", "sk-admin-"],
        r"sk-(?:svcacct|admin)-[A-Za-z0-9_-]{20,}",
        "`sk-svcacct-` or `sk-admin-` + 20 or more letters, digits, `_`, `-`",
        "sk-(svcacct|admin)-[A-Za-z0-9_-]{40,80}",
    ),
    token(
        "openai-legacy-key",
        "OpenAI user key and other `sk-` keys (DeepSeek, Moonshot, ...)",
        "gitleaks:openai-api-key",
        &["sk-"],
        r"sk-[A-Za-z0-9]{20,}",
        "`sk-` + 20 or more letters and digits",
        "sk-[A-Za-z0-9]{20,60}",
    ),
    token(
        "anthropic-api-key",
        "Anthropic API or admin key",
        "gitleaks:anthropic-api-key",
        &["sk-ant-"],
        r"sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{32,}",
        "`sk-ant-api03-` + 32 or more letters, digits, `_`, `-`",
        "sk-ant-(api|admin)0[0-9]-[A-Za-z0-9_-]{80,100}",
    ),
    token(
        "groq-api-key",
        "Groq API key",
        "ours",
        &["gsk_"],
        r"gsk_[A-Za-z0-9]{48,}",
        "`gsk_` + 52 letters and digits",
        "gsk_[A-Za-z0-9]{52}",
    ),
    token(
        "xai-api-key",
        "xAI API key",
        "ours",
        &["xai-"],
        r"xai-[A-Za-z0-9]{70,}",
        "`xai-` + 80 letters and digits",
        "xai-[A-Za-z0-9]{80}",
    ),
    token(
        "perplexity-api-key",
        "Perplexity API key",
        "gitleaks:perplexity-api-key",
        &["pplx-"],
        r"pplx-[A-Za-z0-9]{40,}",
        "`pplx-` + 48 letters and digits",
        "pplx-[A-Za-z0-9]{48}",
    ),
    token(
        "huggingface-token",
        "Hugging Face access token",
        "gitleaks:huggingface-access-token",
        &["hf_"],
        r"hf_[A-Za-z0-9]{30,}",
        "`hf_` + 34 letters",
        "hf_[A-Za-z]{34}",
    ),
    token(
        "huggingface-org-token",
        "Hugging Face organization API token",
        "gitleaks:huggingface-organization-api-token",
        &["api_org_"],
        r"api_org_[A-Za-z0-9]{30,}",
        "`api_org_` + 34 letters",
        "api_org_[A-Za-z]{34}",
    ),
    token(
        "replicate-token",
        "Replicate API token",
        "ours",
        &["r8_"],
        r"r8_[A-Za-z0-9]{37,}",
        "`r8_` + 37 letters and digits",
        "r8_[A-Za-z0-9]{37}",
    ),
    // ----- Google -----
    token(
        "google-api-key",
        "Google Cloud / Gemini / Firebase API key",
        "gitleaks:gcp-api-key",
        &["aiza"],
        r"AIza[0-9A-Za-z_-]{35}",
        "`AIza` + 35 letters, digits, `_`, `-`",
        "AIza[0-9A-Za-z_-]{35}",
    ),
    token(
        "google-oauth-client-secret",
        "Google OAuth client secret",
        "ours",
        &["gocspx-"],
        r"GOCSPX-[A-Za-z0-9_-]{28,}",
        "`GOCSPX-` + 28 letters, digits, `_`, `-`",
        "GOCSPX-[A-Za-z0-9_-]{28}",
    ),
    token(
        "google-oauth-access-token",
        "Google OAuth access token",
        "ours",
        &["ya29."],
        r"ya29\.[0-9A-Za-z_-]{20,}",
        "`ya29.` + 20 or more letters, digits, `_`, `-`",
        "ya29\\.[0-9A-Za-z_-]{40,120}",
    ),
    // ----- Source hosting -----
    token(
        "github-pat",
        "GitHub personal access token (classic)",
        "gitleaks:github-pat",
        &["ghp_"],
        r"ghp_[A-Za-z0-9]{36,}",
        "`ghp_` + 36 letters and digits",
        "ghp_[A-Za-z0-9]{36}",
    ),
    token(
        "github-oauth-token",
        "GitHub OAuth access token",
        "gitleaks:github-oauth",
        &["gho_"],
        r"gho_[A-Za-z0-9]{36,}",
        "`gho_` + 36 letters and digits",
        "gho_[A-Za-z0-9]{36}",
    ),
    token(
        "github-app-token",
        "GitHub App user-to-server or server-to-server token",
        "gitleaks:github-app-token",
        &["ghu_", "ghs_"],
        r"gh[us]_[A-Za-z0-9]{36,}",
        "`ghu_` or `ghs_` + 36 letters and digits",
        "gh[us]_[A-Za-z0-9]{36}",
    ),
    token(
        "github-refresh-token",
        "GitHub refresh token",
        "gitleaks:github-refresh-token",
        &["ghr_"],
        r"ghr_[A-Za-z0-9]{36,}",
        "`ghr_` + 36 or more letters and digits",
        "ghr_[A-Za-z0-9]{36,76}",
    ),
    token(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token",
        "gitleaks:github-fine-grained-pat",
        &["github_pat_"],
        r"github_pat_[A-Za-z0-9_]{60,}",
        "`github_pat_` + 82 letters, digits, `_`",
        "github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
    ),
    token(
        "gitlab-pat",
        "GitLab personal access token",
        "gitleaks:gitlab-pat",
        &["glpat-"],
        r"glpat-[A-Za-z0-9_-]{20,}",
        "`glpat-` + 20 or more letters, digits, `_`, `-`",
        "glpat-[A-Za-z0-9_-]{20,40}",
    ),
    token(
        "gitlab-token",
        "GitLab pipeline-trigger, runner, deploy, OAuth, CI-build, feed, incoming-mail or agent token",
        "gitleaks:gitlab-ptt",
        &[
            "glptt-", "glrt-", "gldt-", "glsoat-", "glcbt-", "glft-", "glimt-", "glagent-",
        ],
        r"gl(?:ptt|rt|dt|soat|cbt|ft|imt|agent)-[A-Za-z0-9_-]{20,}",
        "`glptt-`, `glrt-`, `gldt-`, ... + 20 or more letters, digits, `_`, `-`",
        "gl(ptt|rt|dt|soat|cbt|ft|imt|agent)-[A-Za-z0-9_-]{20,40}",
    ),
    token(
        "atlassian-api-token",
        "Atlassian (Jira, Confluence, Bitbucket) API token",
        "gitleaks:atlassian-api-token",
        &["atatt3"],
        r"ATATT3[A-Za-z0-9_=-]{100,}",
        "`ATATT3` + about 186 letters, digits, `_`, `-`, `=`",
        "ATATT3[A-Za-z0-9_=-]{186}",
    ),
    token(
        "npm-token",
        "npm access token",
        "gitleaks:npm-access-token",
        &["npm_"],
        r"npm_[A-Za-z0-9]{36,}",
        "`npm_` + 36 letters and digits",
        "npm_[A-Za-z0-9]{36}",
    ),
    token(
        "pypi-token",
        "PyPI upload token",
        "gitleaks:pypi-upload-token",
        &["pypi-ageichlwas5vcmc"],
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        "`pypi-AgEIcHlwaS5vcmc` + 50 or more letters, digits, `_`, `-`",
        "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{60,120}",
    ),
    // ----- Chat and messaging -----
    token(
        "slack-bot-token",
        "Slack bot token",
        "gitleaks:slack-bot-token",
        &["xoxb-"],
        r"xoxb-[0-9]{10,13}-[0-9]{10,13}[A-Za-z0-9-]*",
        "`xoxb-` + digits `-` digits `-` letters and digits",
        "xoxb-[0-9]{12}-[0-9]{13}-[A-Za-z0-9]{24}",
    ),
    token(
        "slack-user-token",
        "Slack user, workspace-refresh or legacy token",
        "gitleaks:slack-user-token",
        &["xoxp-", "xoxe-", "xoxa-", "xoxr-", "xoxs-", "xoxo-"],
        r"xox[pearso]-[0-9A-Za-z-]{20,}",
        "`xoxp-` (or `xoxe-`, `xoxa-`, ...) + 20 or more letters, digits, `-`",
        "xox[pe]-[0-9]{12}-[0-9]{12}-[0-9]{13}-[a-f0-9]{32}",
    ),
    token(
        "slack-app-token",
        "Slack app-level token",
        "gitleaks:slack-app-token",
        &["xapp-"],
        r"xapp-[0-9]-[A-Z0-9]+-[0-9]+-[A-Za-z0-9]+",
        "`xapp-1-` + ID `-` digits `-` hex",
        "xapp-1-A[A-Z0-9]{10}-[0-9]{13}-[a-f0-9]{64}",
    ),
    Rule {
        word_start: false,
        secret_group: 1,
        forward: 48,
        ..token(
            "slack-webhook-url",
            "Slack incoming-webhook or workflow URL (the path is the secret)",
            "gitleaks:slack-webhook-url",
            &["hooks.slack.com"],
            r"hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,})",
            "`https://hooks.slack.com/services/` + `T.../B.../` + 24 letters and digits",
            "https://hooks\\.slack\\.com/services/T[A-Z0-9]{10}/B[A-Z0-9]{10}/[A-Za-z0-9]{24}",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        forward: 48,
        ..token(
            "discord-webhook-url",
            "Discord webhook URL (the path is the secret)",
            "ours",
            &["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
            r"discord(?:app)?\.com/api/webhooks/([0-9]{8,20}/[A-Za-z0-9_-]{40,})",
            "`https://discord.com/api/webhooks/` + digits `/` 68 letters, digits, `_`, `-`",
            "https://discord\\.com/api/webhooks/[0-9]{18}/[A-Za-z0-9_-]{68}",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        back: 12,
        ..token(
            "telegram-bot-token",
            "Telegram bot token",
            "gitleaks:telegram-bot-api-token",
            &[":aa"],
            r"(?:^|\\[nrt]|[^0-9A-Za-z_])([0-9]{8,10}:AA[0-9A-Za-z_-]{33})(?:[^0-9A-Za-z_-]|\z)",
            "8 to 10 digits + `:AA` + 33 letters, digits, `_`, `-`",
            "[0-9]{9}:AA[0-9A-Za-z_-]{33}",
        )
    },
    token(
        "sendgrid-api-key",
        "SendGrid API key",
        "gitleaks:sendgrid-api-token",
        &["sg."],
        r"SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{40,50}",
        "`SG.` + 22 characters `.` 43 characters",
        "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}",
    ),
    Rule {
        near: Near::Assignment,
        word_start: false,
        secret_group: 3,
        forward: 64,
        ..token(
            "twilio-credential",
            "Twilio API key or auth token assigned to a Twilio-named key",
            "gitleaks:twilio-api-key",
            &["twilio"],
            concat!(
                r"(?i)twilio[A-Za-z0-9_.-]{0,30}",
                quote!(),
                r"[ \t]*(?:=|:=|:|=>)[ \t]*",
                quote!(),
                r"((?:SK)?[0-9a-f]{32})\b"
            ),
            "a `TWILIO_*` key assigned `SK` + 32 hex digits, or 32 hex digits",
            "TWILIO_API_KEY=SK[0-9a-f]{32}",
        )
    },
    // ----- Payments and commerce -----
    token(
        "stripe-key",
        "Stripe secret or restricted key",
        "gitleaks:stripe-access-token",
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}",
        "`sk_live_` (or `rk_`, `_test_`) + 24 or more letters and digits",
        "[sr]k_(live|test)_[A-Za-z0-9]{24,99}",
    ),
    token(
        "stripe-webhook-secret",
        "Stripe webhook signing secret",
        "ours",
        &["whsec_"],
        r"whsec_[A-Za-z0-9]{24,}",
        "`whsec_` + 32 letters and digits",
        "whsec_[A-Za-z0-9]{32}",
    ),
    token(
        "square-token",
        "Square access token or OAuth secret",
        "gitleaks:square-access-token",
        &["eaaa", "sq0atp-", "sq0csp-"],
        r"(?:EAAA[A-Za-z0-9_-]{60,}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,})",
        "`EAAA` + 60 characters, or `sq0atp-` / `sq0csp-` + 22 or more",
        "(EAAA[A-Za-z0-9_-]{60}|sq0atp-[0-9A-Za-z_-]{22})",
    ),
    token(
        "shopify-token",
        "Shopify access token or shared secret",
        "gitleaks:shopify-access-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "`shpat_` (or `shpca_`, `shppa_`, `shpss_`) + 32 hex digits",
        "shp(at|ss)_[a-f0-9]{32}",
    ),
    // ----- Cloud and infrastructure -----
    token(
        "aws-access-key-id",
        "AWS access key id",
        "gitleaks:aws-access-token",
        &["akia", "asia", "abia", "acca", "a3t"],
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        "`AKIA` (or `ASIA`, ...) + 16 upper-case letters and digits",
        "(AKIA|ASIA)[A-Z2-7]{16}",
    ),
    Rule {
        near: Near::Assignment,
        word_start: false,
        secret_group: 3,
        back: 1,
        forward: 64,
        ..token(
            "aws-secret-access-key",
            "AWS secret access key assigned to an AWS-named key",
            "ours",
            &["aws"],
            concat!(
                r"(?i)(?:^|\\[nrt]|[^A-Za-z0-9])aws[A-Za-z0-9_.-]{0,20}?(?:secret|sk)[A-Za-z0-9_.-]{0,20}?",
                quote!(),
                r"[ \t]*(?:=|:=|:|=>)[ \t]*",
                quote!(),
                r"([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|\z)"
            ),
            "`aws_secret_access_key = ` + 40 base64 characters",
            "aws_secret_access_key = [A-Za-z0-9/+]{40}",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        forward: 16,
        ..token(
            "azure-storage-key",
            "Azure storage account key in a connection string",
            "ours",
            &["accountkey="],
            r"(?i)AccountKey=([A-Za-z0-9+/]{80,}={0,2})",
            "`AccountKey=` + 86 base64 characters + `==`",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[A-Za-z0-9+/]{86}==",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        back: 8,
        ..token(
            "azure-ad-client-secret",
            "Azure AD (Entra ID) client secret",
            "gitleaks:azure-ad-client-secret",
            &["q~"],
            r"(?:^|\\[nrt]|[^A-Za-z0-9_~.])([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?:[^A-Za-z0-9_~.-]|\z)",
            "3 characters + a digit + `Q~` + 31 to 34 characters",
            "[A-Za-z]{3}[0-9]Q~[A-Za-z0-9_~.-]{34}",
        )
    },
    token(
        "digitalocean-token",
        "DigitalOcean personal, OAuth or refresh token",
        "gitleaks:digitalocean-pat",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"do[por]_v1_[a-f0-9]{64}",
        "`dop_v1_` (or `doo_v1_`, `dor_v1_`) + 64 hex digits",
        "do[por]_v1_[a-f0-9]{64}",
    ),
    token(
        "databricks-token",
        "Databricks API token",
        "gitleaks:databricks-api-token",
        &["dapi"],
        r"dapi[a-f0-9]{32}(?:-[0-9])?\b",
        "`dapi` + 32 hex digits",
        "dapi[a-f0-9]{32}",
    ),
    token(
        "vault-token",
        "HashiCorp Vault service or batch token",
        "gitleaks:vault-service-token",
        &["hvs.", "hvb."],
        r"hv[sb]\.[A-Za-z0-9_-]{24,}",
        "`hvs.` (or `hvb.`) + 24 or more letters, digits, `_`, `-`",
        "hvs\\.[A-Za-z0-9_-]{90,100}",
    ),
    Rule {
        back: 16,
        ..token(
            "terraform-cloud-token",
            "Terraform Cloud / HCP API token",
            "gitleaks:hashicorp-tf-api-token",
            &["atlasv1"],
            r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
            "14 characters + `.atlasv1.` + 60 to 70 characters",
            "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{64}",
        )
    },
    token(
        "doppler-token",
        "Doppler API token",
        "gitleaks:doppler-api-token",
        &[
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
        ],
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
        "`dp.pt.` + 43 letters and digits",
        "dp\\.pt\\.[A-Za-z0-9]{43}",
    ),
    token(
        "grafana-token",
        "Grafana cloud API or service-account token",
        "gitleaks:grafana-cloud-api-token",
        &["glc_", "glsa_"],
        r"gl(?:c|sa)_[A-Za-z0-9+/_=-]{32,}",
        "`glc_` + 32 or more base64 characters, or `glsa_` + 32 + `_` + 8 hex",
        "glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}",
    ),
    token(
        "new-relic-key",
        "New Relic user API key",
        "gitleaks:new-relic-user-api-key",
        &["nrak-"],
        r"NRAK-[A-Z0-9]{27}",
        "`NRAK-` + 27 upper-case letters and digits",
        "NRAK-[A-Z0-9]{27}",
    ),
    token(
        "sentry-token",
        "Sentry organization or user auth token",
        "gitleaks:sentry-org-token",
        &["sntrys_", "sntryu_"],
        r"sntr[ys]?[su]_[A-Za-z0-9+/=_-]{40,}",
        "`sntrys_` + base64, or `sntryu_` + 64 hex digits",
        "sntryu_[a-f0-9]{64}",
    ),
    token(
        "postman-api-key",
        "Postman API key",
        "gitleaks:postman-api-token",
        &["pmak-"],
        r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        "`PMAK-` + 24 hex `-` 34 hex",
        "PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    ),
    token(
        "linear-api-key",
        "Linear API key",
        "gitleaks:linear-api-key",
        &["lin_api_"],
        r"lin_api_[A-Za-z0-9]{40}",
        "`lin_api_` + 40 letters and digits",
        "lin_api_[A-Za-z0-9]{40}",
    ),
    token(
        "notion-token",
        "Notion integration token",
        "ours",
        &["ntn_"],
        r"ntn_[0-9]{11}[A-Za-z0-9]{35}",
        "`ntn_` + 11 digits + 35 letters and digits",
        "ntn_[0-9]{11}[A-Za-z0-9]{35}",
    ),
    token(
        "supabase-key",
        "Supabase personal access token or secret key",
        "ours",
        &["sbp_", "sb_secret_"],
        r"sb(?:p|_secret)_[A-Za-z0-9_-]{30,}",
        "`sbp_` + 40 hex digits, or `sb_secret_` + 30 or more characters",
        "sbp_[a-f0-9]{40}",
    ),
    token(
        "planetscale-token",
        "PlanetScale password or token",
        "gitleaks:planetscale-api-token",
        &["pscale_"],
        r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,}",
        "`pscale_tkn_` (or `pscale_pw_`) + 32 or more characters",
        "pscale_(tkn|pw)_[A-Za-z0-9=._-]{43}",
    ),
    token(
        "dynatrace-token",
        "Dynatrace API token",
        "gitleaks:dynatrace-api-token",
        &["dt0c01."],
        r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",
        "`dt0c01.` + 24 `.` 64 upper-case letters and digits",
        "dt0c01\\.[A-Z0-9]{24}\\.[A-Z0-9]{64}",
    ),
    token(
        "fly-io-token",
        "Fly.io access token",
        "gitleaks:flyio-access-token",
        &["fo1_"],
        r"fo1_[A-Za-z0-9_-]{43}",
        "`fo1_` + 43 characters",
        "fo1_[A-Za-z0-9_-]{43}",
    ),
    token(
        "age-secret-key",
        "age encryption secret key",
        "gitleaks:age-secret-key",
        &["age-secret-key-1"],
        r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
        "`AGE-SECRET-KEY-1` + 58 upper-case letters and digits",
        "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    // ----- Structural secrets -----
    Rule {
        word_start: false,
        back: 128,
        forward: 64 << 10,
        ..token(
            "private-key",
            "PEM private key block (RSA, EC, DSA, OpenSSH, PKCS#8, PGP), also when cut off",
            "gitleaks:private-key",
            &["private key-----", "private key block-----"],
            concat!(
                r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
                r"(?:(?s:.)*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
                // Cut off before its end: the header, a line break and at least 16 body bytes.
                r"|(?:\\[rn]|[\r\n])+(?:[A-Za-z0-9+/=:, -]|\\[rn]|[\r\n]){16,})"
            ),
            "`-----BEGIN RSA PRIVATE KEY-----` ... `-----END RSA PRIVATE KEY-----`",
            "-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----\n([A-Za-z0-9+/]{64}\n){3,8}[A-Za-z0-9+/]{1,63}=?\n-----END (RSA |EC |OPENSSH )?PRIVATE KEY-----",
        )
    },
    token(
        "jwt",
        "JSON Web Token (header, payload and signature)",
        "gitleaks:jwt",
        &["eyj"],
        r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
        "`eyJ...` `.` `eyJ...` `.` signature (base64url)",
        "eyJ[A-Za-z0-9_-]{20,40}\\.eyJ[A-Za-z0-9_-]{20,80}\\.[A-Za-z0-9_-]{20,43}",
    ),
    Rule {
        secret_group: 1,
        back: 24,
        forward: 200,
        check: Check::UrlPassword,
        ..token(
            "url-credentials",
            "Password in a URL or connection URL (`scheme://user:password@host`)",
            "ours",
            &["://"],
            r#"(?i)[a-z][a-z0-9+.-]{1,20}://[^\s:/@"'\\\[\]<>]{0,64}:([^\s:/@"'\\\[\]<>]{3,128})@"#,
            "`postgres://user:` + password + `@host/db`",
            "(postgres|mysql|mongodb\\+srv|redis|amqp|https)://[a-z]{3,10}:[A-Za-z0-9!*_-]{8,24}@[a-z]{3,10}\\.example\\.com",
        )
    },
    Rule {
        word_start: false,
        secret_group: 1,
        back: 16,
        check: Check::NotReference,
        ..token(
            "connection-string-password",
            "`Password=` field of a semicolon-separated connection string",
            "ours",
            &["password=", "pwd="],
            r#"(?i);[ \t]*(?:password|pwd)=([^;\s"'\\\[\](){}<>]{1,128})"#,
            "`Server=db;User Id=app;Password=` + password + `;`",
            "Server=db;User Id=app;Password=[A-Za-z0-9!*_-]{8,24};",
        )
    },
    Rule {
        near: Near::Assignment,
        secret_group: 3,
        forward: 64,
        check: Check::Authorization,
        ..token(
            "authorization-header",
            "`Authorization` / `Proxy-Authorization` header with any scheme",
            "ours",
            &["authorization"],
            concat!(
                r"(?i)(?:proxy-)?authorization",
                quote!(),
                r"[ \t]*[:=][ \t]*",
                quote!(),
                r"(?:[A-Za-z][A-Za-z0-9_-]{0,20}[ \t]+)?([A-Za-z0-9._~+/=:-]{8,})"
            ),
            "`Authorization: Basic ` + base64, `Authorization: token ` + token",
            "Authorization: (Basic|Token|Digest|AWS4-HMAC-SHA256) [A-Za-z]{6}[0-9]{4}[A-Za-z0-9+/]{10,30}",
        )
    },
    Rule {
        secret_group: 1,
        forward: 16,
        check: Check::HasDigit,
        ..token(
            "bearer-token",
            "Bearer token anywhere (`Bearer ` + 16 or more token characters)",
            "ours",
            &["bearer"],
            r"(?i)bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)",
            "`Bearer ` + 16 or more letters, digits, `.`, `_`, `~`, `+`, `/`, `-`",
            "Bearer [A-Za-z]{8}[0-9]{4}[A-Za-z0-9._~+/-]{8,40}",
        )
    },
    Rule {
        near: Near::Assignment,
        word_start: false,
        secret_group: 4,
        back: 8,
        forward: 64,
        check: Check::HeaderValue,
        ..token(
            "api-key-header",
            "API-key headers (`X-API-Key`, `X-Auth-Token`, `Private-Token`, `X-Goog-Api-Key`, ...)",
            "ours",
            &[
                "api-key",
                "api-token",
                "auth-token",
                "access-token",
                "security-token",
                "vault-token",
                "gitlab-token",
                "subscription-token",
                "private-token",
                "subscription-key",
            ],
            concat!(
                r"(?i)(?:^|\\[nrt]|[^A-Za-z0-9_-])((?:x-)?(?:goog-)?(?:api-key|api-token|auth-token|access-token|amz-security-token|vault-token|gitlab-token|subscription-token)|private-token|ocp-apim-subscription-key)",
                quote!(),
                r"[ \t]*:[ \t]*",
                quote!(),
                r"([A-Za-z0-9._~+/=-]{8,})"
            ),
            "`X-API-Key: ` + key",
            "(X-API-Key|X-Auth-Token|Private-Token): [a-z]{6}[0-9]{4}[A-Za-z0-9]{10,30}",
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
            "Secret passed as a command-line flag (`--password=...`, `--token ...`, `--api-key ...`)",
            "ours",
            &[
                "password",
                "passwd",
                "token",
                "secret",
                "api-key",
                "apikey",
                "access-key",
                "private-key",
            ],
            concat!(
                r#"(?i)(?:^|\\[nrt]|[\s"'=])--?((?:[a-z0-9]+-){0,4}(?:password|passwd|token|secret|api-key|apikey|access-key|secret-key|private-key|auth-token|client-secret))(?:=|[ \t]+)"#,
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
        near: Near::Assignment,
        word_start: false,
        secret_group: 4,
        back: 48,
        forward: 64,
        check: Check::Assignment,
        ..token(
            "generic-assignment",
            "A secret-named key assigned a literal value in shell, env, YAML, TOML, JSON \
             (also JSON-escaped) and code: `api_key=`, `TOKEN:`, `\"password\": \"...\"`",
            "ours",
            &[
                "password",
                "passwd",
                "passphrase",
                "secret",
                "token",
                "api_key",
                "api-key",
                "apikey",
                "access_key",
                "access-key",
                "accesskey",
                "private_key",
                "private-key",
                "privatekey",
                "auth_key",
                "auth-key",
                "authkey",
                "credential",
            ],
            concat!(
                r"(?i)(?:^|[^A-Za-z0-9_-])([A-Za-z0-9_-]{0,40}?(?:",
                secret_key_names!(),
                r"))",
                quote!(),
                r"[ \t]*(?:=|:=|:|=>)[ \t]*",
                quote!(),
                "(",
                value_chars!(),
                "+)"
            ),
            "`API_KEY=` + value with letters and digits, `\"token\": \"` + value + `\"`",
            "(API_KEY=|export GITHUB_TOKEN=|db_password: |\"client_secret\": \"|secret_key = ')[a-z]{4}[0-9]{4}[A-Za-z0-9]{4,20}",
        )
    },
];

/// Matches a whole key name that holds a secret (for JSON members).
pub(crate) const SECRET_KEY_NAME: &str = concat!(
    r"(?i)\A[A-Za-z0-9_-]{0,40}?(?:",
    secret_key_names!(),
    r")\z"
);
