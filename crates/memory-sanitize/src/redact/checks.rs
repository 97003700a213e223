//! What a value is when it is not a secret: a reference to one, a placeholder, code, a path.
//!
//! Context rules (assignments, headers, flags) find a value by the name before it, so they must
//! tell a literal secret (`password=correcthorsebattery`) from text that only names or fetches
//! one (`password = os.environ["PASSWORD"]`, `token: ${TOKEN}`, `api_key: YOUR_API_KEY`). These
//! predicates are that judgement; `docs/secrets.md` lists them as the documented exceptions.

/// A reference to a secret kept elsewhere: `$VAR`, `${VAR}`, `$(cmd)`, `{{ var }}`, `%VAR%`,
/// `<placeholder>`, `@var`, `&var`, `*ptr`, or a file path (`/run/secrets/db`, `./token.txt`,
/// `~/.token`, `C:\keys\a.pem`).
pub(crate) fn is_reference(value: &[u8]) -> bool {
    matches!(
        value.first(),
        Some(b'$' | b'{' | b'%' | b'<' | b'@' | b'&' | b'*' | b'/')
    ) || value.starts_with(b"./")
        || value.starts_with(b"../")
        || value.starts_with(b"~/")
        || (value.len() > 3
            && value.first().is_some_and(u8::is_ascii_alphabetic)
            && value.get(1..3) == Some(b":\\"))
        || find(value, b"${").is_some()
        || find(value, b"$(").is_some()
        || find(value, b"{{").is_some()
}

/// A variable or template standing for a secret: `$VAR`, `${VAR}`, `$(cmd)`, `{{ var }}`,
/// `%VAR%`, `<placeholder>`. Narrower than [`is_reference`], for positions where a value may
/// well start with `/`, `*` or `@` (a URL password, base64).
pub(crate) fn is_variable(value: &[u8]) -> bool {
    matches!(value.first(), Some(b'$' | b'{' | b'<'))
        || (value.first() == Some(&b'%') && value.last() == Some(&b'%'))
        || find(value, b"${").is_some()
        || find(value, b"$(").is_some()
        || find(value, b"{{").is_some()
}

/// A name standing for a secret, not a secret: only upper-case letters, `_` and `-`
/// (`TOKEN`, `YOUR_API_KEY`), or a filler ([`is_filler`]).
pub(crate) fn is_placeholder(value: &[u8]) -> bool {
    (value.iter().any(u8::is_ascii_uppercase)
        && value
            .iter()
            .all(|b| b.is_ascii_uppercase() || *b == b'_' || *b == b'-'))
        || is_filler(value)
}

/// Constant names such as `CLIENT_SECRET_0`: how code names a secret, not the secret.
pub(crate) fn is_constant_name(value: &[u8]) -> bool {
    value.contains(&b'_')
        && value
            .first()
            .is_some_and(|b| b.is_ascii_uppercase() || *b == b'_')
        && value
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
}

/// Words and shapes that examples put in place of a secret: one character repeated
/// (`xxxxxxxx`, `********`), mostly masked (`sk_live_xxxxxxxxxxxx`), a filler word
/// (`password`, `changeme`, `redacted`, `null`), `your-token-here`, `[hidden]`.
pub(crate) fn is_filler(value: &[u8]) -> bool {
    const WORDS: [&[u8]; 33] = [
        b"password",
        b"passwd",
        b"pass",
        b"secret",
        b"token",
        b"changeme",
        b"changeit",
        b"redacted",
        b"example",
        b"dummy",
        b"test",
        b"fake",
        b"sample",
        b"placeholder",
        b"none",
        b"null",
        b"nil",
        b"undefined",
        b"true",
        b"false",
        b"required",
        b"optional",
        b"string",
        b"empty",
        b"hidden",
        b"masked",
        b"default",
        b"notset",
        b"abc",
        b"xyz",
        b"foo",
        b"bar",
        b"baz",
    ];
    // Compared ignoring ASCII case in place: this runs on every value a context rule sees.
    let same_char = value.windows(2).all(|w| w.first() == w.get(1));
    let starts = |prefix: &[u8]| {
        value
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    let ends = |suffix: &[u8]| {
        value
            .len()
            .checked_sub(suffix.len())
            .and_then(|at| value.get(at..))
            .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix))
    };
    let holds = |word: &[u8]| {
        value
            .windows(word.len())
            .any(|window| window.eq_ignore_ascii_case(word))
    };
    same_char
        || WORDS.iter().any(|word| word.eq_ignore_ascii_case(value))
        || starts(b"your")
        || ends(b"_here")
        || ends(b"-here")
        || holds(b"changeme")
        || holds(b"redacted")
        || mostly_masked(value)
        || (value.first() == Some(&b'[') && value.last() == Some(&b']'))
}

/// Half or more of the bytes are `x`, `X`, `*`, `.` or `#`: a masked or made-up value
/// (`sk_live_xxxxxxxxxxxx`, `****-****`).
fn mostly_masked(value: &[u8]) -> bool {
    let masked = value
        .iter()
        .filter(|b| matches!(b, b'x' | b'X' | b'*' | b'.' | b'#'))
        .count();
    value.len() >= 4 && masked * 2 >= value.len()
}

/// Code rather than a literal: a call or a macro (`next_token()`, `vec![0u8; 32]`), indexing
/// (`tokens[0]`), a generic type (`Option<String>`), a block (`{ ... }`), a path (`Token::new`,
/// `self->token`), a member access (`self.config.token`), a negation (`!!ownPass`). `rest` is
/// the text after the value.
pub(crate) fn is_code(value: &[u8], rest: &[u8]) -> bool {
    if find(value, b"::").is_some()
        || find(value, b"->").is_some()
        || value
            .iter()
            .any(|b| matches!(b, b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>'))
    {
        return true;
    }
    let negated = value.iter().take_while(|&&b| b == b'!').count();
    if negated > 0 && value.get(negated..).is_some_and(is_identifier) {
        return true;
    }
    // `name` followed by `(` / `[` / `<` just after the value.
    if is_identifier(value) && matches!(rest.first(), Some(b'(' | b'[' | b'<')) {
        return true;
    }
    // A member access followed by an operator: `e.crossOrigin==="use-credentials"`.
    let head_len = value
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$'))
        .count();
    let head = value.get(..head_len).unwrap_or_default();
    if head_len < value.len()
        && is_member_path(head)
        && value.get(head_len).is_some_and(|b| b"=!<>?".contains(b))
    {
        return true;
    }
    is_member_path(value)
}

/// A code identifier: a letter, `_` or `$`, then letters, digits, `_`, `$`.
pub(crate) fn is_identifier(value: &[u8]) -> bool {
    value
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$'))
        && value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
}

/// A value that names a secret rather than holding one: it spells a secret word
/// (`challengePassword`, `'secret_key'`, `EC PRIVATE KEY`, `id-smime-aa-timeStampToken`).
/// `also` adds the word of a weak key name (`key`, `auth`, `session`).
pub(crate) fn names_a_secret(value: &[u8], also: &[&[u8]]) -> bool {
    const WORDS: [&[u8]; 7] = [
        b"password",
        b"passwd",
        b"passphrase",
        b"secret",
        b"token",
        b"credential",
        b"private",
    ];
    let letters: Vec<u8> = value
        .iter()
        .filter(|b| b.is_ascii_alphanumeric())
        .map(u8::to_ascii_lowercase)
        .collect();
    WORDS
        .iter()
        .chain(also.iter())
        .any(|word| find(&letters, word).is_some())
}

/// `a.b.c` where every segment is an identifier: a member access or a module path.
fn is_member_path(value: &[u8]) -> bool {
    value.contains(&b'.')
        && value.split(|&b| b == b'.').all(|segment| {
            segment.len() <= 40
                && segment
                    .first()
                    .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'$')
                && segment
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
        })
}

/// A code identifier that names a variable or a type rather than holding a value:
/// `snake_case` with an underscore between letters, `camelCase`, `PascalCase` (letters and digits
/// only, both cases, no digit run that would make it look generated).
pub(crate) fn is_identifier_name(value: &[u8]) -> bool {
    let Some(&first) = value.first() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$')
        || !value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
    {
        return false;
    }
    let digits = value.iter().filter(|b| b.is_ascii_digit()).count();
    if digits > 2 {
        return false;
    }
    let snake = value
        .windows(3)
        .any(|w| matches!(w, [a, b'_', c] if a.is_ascii_alphabetic() && c.is_ascii_alphabetic()));
    let mixed_case = value
        .windows(2)
        .any(|w| matches!(w, [a, b] if a.is_ascii_lowercase() && b.is_ascii_uppercase()))
        || (first.is_ascii_uppercase() && value.iter().skip(1).any(u8::is_ascii_lowercase));
    snake || mixed_case
}

/// An identifier made of words, as code names variables and types: `snake_case` with an
/// underscore between letters, or words joined in `camelCase` / `PascalCase` / lower case
/// (`accessToken`, `TokenKind`, `AWSAccessKeyId`, `settings`), at most two digits.
///
/// Words are the camel-case humps and digit runs. A word is *spoken* when it holds a vowel
/// (`y` counts) and no run of four consonants; a single lower-case letter is spoken only first
/// (`xAuthToken`); an upper-case run (an acronym) of up to five letters is allowed once. The
/// identifier is made of words when at most one word is not spoken, its words average three
/// letters or more, and one letter in four or more is a vowel. Random letters almost never
/// are: their humps are short, their lower-case runs rarely hold a vowel.
pub(crate) fn is_word_identifier(value: &[u8]) -> bool {
    let Some(&first) = value.first() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$')
        || !value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$')
        || value.iter().filter(|b| b.is_ascii_digit()).count() > 2
    {
        return false;
    }
    if value
        .windows(3)
        .any(|w| matches!(w, [a, b'_', c] if a.is_ascii_alphabetic() && c.is_ascii_alphabetic()))
    {
        return true;
    }
    // Digits in a name of one case are a generated value (`inivalue99`), not a variable.
    let one_case =
        !(value.iter().any(u8::is_ascii_uppercase) && value.iter().any(u8::is_ascii_lowercase));
    if one_case && value.iter().any(u8::is_ascii_digit) {
        return false;
    }
    let words = camel_words(value);
    let is_vowel = |b: &u8| {
        matches!(
            b.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    };
    let mut unspoken = 0;
    let mut acronyms = 0;
    let mut letter_words = 0;
    let mut letters = 0;
    let mut lower_letters = 0;
    let mut vowels = 0;
    for (i, word) in words.iter().enumerate() {
        if word.iter().all(u8::is_ascii_digit) {
            continue;
        }
        letter_words += 1;
        letters += word.len();
        if word.len() > 1 && word.iter().all(u8::is_ascii_uppercase) {
            acronyms += 1;
            if word.len() > 5 {
                return false;
            }
            continue;
        }
        lower_letters += word.len();
        vowels += word.iter().filter(|b| is_vowel(b)).count();
        let mut run = 0;
        let mut longest = 0;
        for b in word.iter() {
            run = if is_vowel(b) { 0 } else { run + 1 };
            longest = longest.max(run);
        }
        let spoken = if word.len() == 1 {
            i == 0 && word.iter().all(u8::is_ascii_lowercase)
        } else {
            word.iter().any(is_vowel) && longest < 4
        };
        if !spoken {
            unspoken += 1;
        }
    }
    letter_words > 0
        && unspoken <= 1
        && acronyms <= 1
        && letters >= 3 * letter_words
        && vowels * 4 >= lower_letters
}

/// Splits an identifier into camel-case humps and digit runs (`XMLHttpRequest2` → XML, Http,
/// Request, 2); `_` and `$` separate words too.
fn camel_words(value: &[u8]) -> Vec<&[u8]> {
    let mut words = Vec::new();
    let mut start = 0;
    for i in 0..value.len() {
        let (Some(&b), Some(&p)) = (value.get(i), i.checked_sub(1).and_then(|j| value.get(j)))
        else {
            continue;
        };
        let next = value.get(i + 1);
        let boundary = matches!(b, b'_' | b'$')
            || matches!(p, b'_' | b'$')
            || p.is_ascii_digit() != b.is_ascii_digit()
            || (p.is_ascii_lowercase() && b.is_ascii_uppercase())
            || (p.is_ascii_uppercase()
                && b.is_ascii_uppercase()
                && next.is_some_and(u8::is_ascii_lowercase));
        if boundary {
            if let Some(word) = value.get(start..i).filter(|w| !w.is_empty()) {
                words.push(word);
            }
            start = i;
        }
    }
    if let Some(word) = value.get(start..).filter(|w| !w.is_empty()) {
        words.push(word);
    }
    words.retain(|w| !matches!(w, [b'_' | b'$']));
    words
}

/// Words a language uses for "no value": `None`, `null`, `nil`, `undefined`, `true`, `false`.
pub(crate) fn is_keyword_value(value: &[u8]) -> bool {
    let lower = value.to_ascii_lowercase();
    [
        &b"none"[..],
        b"null",
        b"nil",
        b"undefined",
        b"true",
        b"false",
        b"self",
        b"this",
    ]
    .contains(&lower.as_slice())
}

/// A long token that looks generated: 16 or more token bytes (letters, digits, `+/=_.~-`) with
/// digits and upper-case letters (base64, base62, base32 alike; a slug such as
/// `x-hello-world-64` has none), at least 3 bits of entropy per byte, and not a variable name,
/// a UUID, a member path or a path. Used where a name or a position
/// says "credential" but no provider rule knows the shape.
pub(crate) fn looks_random(value: &[u8]) -> bool {
    value.len() >= 16
        && value.iter().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'.' | b'~' | b'-')
        })
        && value.iter().any(u8::is_ascii_digit)
        && value.iter().any(u8::is_ascii_uppercase)
        && !is_identifier_name(value)
        && !is_uuid(value)
        && !is_reference(value)
        && !is_filler(value)
        && !is_member_path(value)
        && value.iter().filter(|b| **b == b'/').count() < 3
        && entropy(value) >= 3.0
}

/// Only hex digits (of one case): a hash, a test vector or a key id as often as a secret.
pub(crate) fn is_hex(value: &[u8]) -> bool {
    value.iter().all(u8::is_ascii_hexdigit)
        && !(value.iter().any(u8::is_ascii_lowercase) && value.iter().any(u8::is_ascii_uppercase))
}

/// `8-4-4-4-12` hex digits.
pub(crate) fn is_uuid(value: &[u8]) -> bool {
    value.len() == 36
        && value.iter().enumerate().all(|(i, b)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *b == b'-'
            } else {
                b.is_ascii_hexdigit()
            }
        })
}

/// Shannon entropy of the bytes of `value`, in bits per byte.
pub(crate) fn entropy(value: &[u8]) -> f64 {
    if value.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in value {
        if let Some(count) = counts.get_mut(usize::from(b)) {
            *count += 1;
        }
    }
    let len = value.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / len;
            -p * p.log2()
        })
        .sum()
}

/// How many of lower-case, upper-case, digit and symbol the value mixes.
pub(crate) fn character_classes(value: &[u8]) -> usize {
    let has = |f: fn(&u8) -> bool| usize::from(value.iter().any(f));
    has(u8::is_ascii_lowercase)
        + has(u8::is_ascii_uppercase)
        + has(u8::is_ascii_digit)
        + has(|b| !b.is_ascii_alphanumeric())
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_recognized() {
        assert!(is_code(b"lexer.next_token", b"();"));
        assert!(is_code(b"self.config.token", b""));
        assert!(is_code(b"node.colon2_token", b","));
        assert!(is_code(b"Token::new", b""));
        assert!(is_code(b"Curve25519SeedBin", b"<'_>"));
        assert!(is_code(b"os.environ[\"X\"]", b""));
        assert!(is_code(b"get_token()", b""));
        assert!(!is_code(b"abc123def456", b" == x"));
        assert!(!is_code(b"v1.2.3-secret9", b""));
        assert!(is_code(b"vec![0u8;", b""));
        assert!(is_code(b"!!ownPass", b""));
        assert!(!is_code(b"P@ss-w0rd", b""));
    }

    #[test]
    fn references_placeholders_and_fillers() {
        for value in [
            &b"$TOKEN"[..],
            b"${API_KEY}",
            b"$(cat ~/.token)",
            b"{{ secrets.X }}",
            b"%PASSWORD%",
            b"<token>",
            b"/run/secrets/db_password",
            b"./token.txt",
        ] {
            assert!(is_reference(value), "{}", String::from_utf8_lossy(value));
        }
        for value in [
            &b"YOUR_API_KEY"[..],
            b"TOKEN",
            b"xxxxxxxx",
            b"********",
            b"changeme",
            b"your-token-here",
            b"sk_live_xxxxxxxxxxxxxxxx",
            b"[hidden]",
        ] {
            assert!(is_placeholder(value), "{}", String::from_utf8_lossy(value));
        }
        assert!(!is_placeholder(b"correcthorsebattery"));
        assert!(!is_placeholder(b"Hunter2024"));
    }

    #[test]
    fn identifier_names() {
        assert!(is_identifier_name(b"default_password"));
        assert!(is_identifier_name(b"accessToken"));
        assert!(is_identifier_name(b"TokenKind"));
        assert!(!is_identifier_name(b"correcthorsebattery"));
        assert!(!is_identifier_name(b"a1b2c3d4e5"));
        assert!(!is_identifier_name(b"s3cr3t-pass"));
    }

    #[test]
    fn word_identifiers() {
        for name in [
            &b"default_password"[..],
            b"accessToken",
            b"TokenKind",
            b"AWSAccessKeyId",
            b"settings",
            b"xAuthToken",
            b"ListSecrets",
        ] {
            assert!(
                is_word_identifier(name),
                "{}",
                String::from_utf8_lossy(name)
            );
        }
        for random in [
            &b"JlE9qPdwy7BYbhKJGrUw"[..],
            b"RzuqmNjB6NHDhsycm0mQzpSF",
            b"M2FbPiO3AOriRcyWcAkw",
            b"NrFt5P4dYaUfUo",
            b"Xk2pLm9QrT4vWz8N",
            b"a1b2c3d4e5",
            b"s3cr3t-pass",
        ] {
            assert!(
                !is_word_identifier(random),
                "{}",
                String::from_utf8_lossy(random)
            );
        }
    }

    #[test]
    fn randomness() {
        assert!(looks_random(b"4F9A8B7C6D5E4F3A2B1C"));
        assert!(!looks_random(b"x-hello-world-64"));
        assert!(looks_random(b"xK9mPq2LzR7vW3nB"));
        assert!(!looks_random(b"authentication_required"));
        assert!(!looks_random(b"0196a1b2-0000-7000-8000-000000000001"));
        assert!(!looks_random(b"short1"));
        assert!(entropy(b"aaaa") < 0.01);
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
    }
}
