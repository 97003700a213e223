//! Comparison keys of items, and their hashes.
//!
//! Two items say the same thing when their keys are equal ([`item_key`]). The guards compare
//! many items per merge (every APPEND is deduplicated against the whole section), so they keep
//! 64-bit hashes of keys rather than the keys ([`ItemKeys`]). Most items are plain ASCII with
//! single spaces; for those the key is the lower-cased core of the item, and its hash is read
//! straight from the item's bytes, eight at a time, with no copy. Items with code spans or
//! emphasis are hashed the same way once their marks are cut out; other items build the key
//! in a buffer first. All paths hash the same bytes, so equal keys always hash equally
//! (property tests hold the paths to that, and keys to their plain definition). A few new
//! items are checked against a section without hashing it: `key_of_core_is` compares an
//! old item with a key up to their first difference.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::text::{items, strip_marker, strip_status_tags};

/// The comparison key of an item: lower-cased, status tags (`[new]`, `[resolved]`,
/// `[restored]`) and emphasis marks removed, whitespace collapsed, no leading or trailing
/// period, underscore or space. Two items with the same key say the same thing; a short item
/// is a duplicate only of an equal item, never of a longer one that happens to contain it.
pub fn item_key(item: &str) -> String {
    let mut key = Vec::new();
    write_key(item, &mut key);
    String::from_utf8(key).unwrap_or_default()
}

/// The part of an item its key is made from.
fn key_core(item: &str) -> &str {
    strip_status_tags(strip_marker(super::text::trim(item)))
}

/// Writes the key of `item` (see [`item_key`]) into `out`, which is cleared first. The bytes
/// are UTF-8: only whole characters are copied, lower-cased.
fn write_key(item: &str, out: &mut Vec<u8>) {
    out.clear();
    let core = key_core(item);
    out.reserve(core.len());
    let mut space = false;
    if core.is_ascii() {
        // Runs of ordinary bytes are copied whole and lower-cased at the end.
        let bytes = core.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            let rest = bytes.get(at..).unwrap_or_default();
            let run = rest
                .iter()
                .position(|byte| matches!(byte, b'*' | b'`' | b'\t'..=b'\r' | b' '))
                .unwrap_or(rest.len());
            if run > 0 {
                if space {
                    out.push(b' ');
                    space = false;
                }
                out.extend_from_slice(rest.get(..run).unwrap_or_default());
            }
            if let Some(&special) = rest.get(run)
                && special != b'*'
                && special != b'`'
            {
                space = !out.is_empty();
            }
            at += run + 1;
        }
        out.make_ascii_lowercase();
    } else {
        let mut buffer = [0u8; 4];
        for ch in core.chars() {
            if ch == '*' || ch == '`' {
                continue;
            }
            if ch.is_whitespace() {
                space = !out.is_empty();
                continue;
            }
            if space {
                out.push(b' ');
                space = false;
            }
            for lower in ch.to_lowercase() {
                out.extend_from_slice(lower.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
    let trim = |byte: &u8| matches!(byte, b'_' | b'.' | b' ');
    let end = out
        .iter()
        .rposition(|byte| !trim(byte))
        .map_or(0, |at| at + 1);
    out.truncate(end);
    let start = out.iter().position(|byte| !trim(byte)).unwrap_or(out.len());
    out.drain(..start);
}

/// [`item_key`] into a buffer kept between calls. A plain item (see [`plain_hash`]) is its
/// key lower-cased, copied whole (and, being ASCII, needs no UTF-8 check).
pub(crate) fn item_key_in<'b>(item: &str, buffer: &'b mut String) -> &'b str {
    let core = trimmed_core(item);
    buffer.clear();
    if is_plain(core.as_bytes()) {
        buffer.push_str(core);
        buffer.make_ascii_lowercase();
    } else {
        let mut bytes = std::mem::take(buffer).into_bytes();
        write_key(item, &mut bytes);
        *buffer = String::from_utf8(bytes).unwrap_or_default();
    }
    buffer
}

/// Appends [`item_key`]`(item)` to `out`: a plain item's key lower-cased in place, so only
/// other items use `buffer` (which is not allocated until one does).
pub(crate) fn push_item_key(item: &str, out: &mut String, buffer: &mut String) {
    let core = trimmed_core(item);
    if is_plain(core.as_bytes()) {
        let start = out.len();
        out.push_str(core);
        if let Some(key) = out.get_mut(start..) {
            key.make_ascii_lowercase();
        }
    } else {
        out.push_str(item_key_in(item, buffer));
    }
}

/// The core of an item without what a key trims from its ends (emphasis marks included,
/// which a key drops anyway).
fn trimmed_core(item: &str) -> &str {
    let is_edge = |ch: char| ch.is_whitespace() || matches!(ch, '_' | '.' | '*' | '`');
    // ASCII edges are skipped byte by byte; a non-ASCII edge takes the character-wise trim.
    let is_ascii_edge =
        |byte: &u8| matches!(byte, b'\t'..=b'\r' | b' ' | b'_' | b'.' | b'*' | b'`');
    let rest = match item.as_bytes() {
        // An item that starts with an ASCII letter and ends in ASCII other than whitespace
        // (most items) has no marker, tag or leading edge to cut.
        [first, .., last]
            if first.is_ascii_alphabetic() && !matches!(last, b'\t'..=b'\r' | b' ' | 0x80..) =>
        {
            item
        }
        // Nor does one that starts with a code span or another edge that is no marker (`*`
        // is one) and no tag: only its leading edges are cut.
        [b'`' | b'_' | b'.', .., last] if !matches!(last, b'\t'..=b'\r' | b' ' | 0x80..) => {
            let start = item
                .as_bytes()
                .iter()
                .position(|byte| !is_ascii_edge(byte))
                .unwrap_or(item.len());
            item.get(start..).unwrap_or_default()
        }
        _ => {
            let core = key_core(item);
            let start = core
                .as_bytes()
                .iter()
                .position(|byte| !is_ascii_edge(byte))
                .unwrap_or(core.len());
            core.get(start..).unwrap_or_default()
        }
    };
    let rest = if rest.as_bytes().first().is_some_and(|byte| !byte.is_ascii()) {
        rest.trim_start_matches(is_edge)
    } else {
        rest
    };
    let end = rest
        .as_bytes()
        .iter()
        .rposition(|byte| !is_ascii_edge(byte))
        .map_or(0, |at| at + 1);
    let rest = rest.get(..end).unwrap_or_default();
    if rest.as_bytes().last().is_some_and(|byte| !byte.is_ascii()) {
        rest.trim_end_matches(is_edge)
    } else {
        rest
    }
}

/// A 64-bit hash of [`item_key`]`(item)`; `None` when the key is empty. Equal keys hash
/// equally. Two different keys of the same length that differ in one 8-byte block never
/// collide (each mixing step is a bijection); otherwise a collision has a chance of about one
/// in 2^64, which the guards accept in exchange for comparing items without keeping their keys.
pub fn key_hash(item: &str) -> Option<u64> {
    key_hash_with(item, &mut Vec::new())
}

/// [`key_hash`], with a buffer for the items that need one.
pub(crate) fn key_hash_with(item: &str, buffer: &mut Vec<u8>) -> Option<u64> {
    let core = trimmed_core(item);
    if core.is_empty() {
        return None;
    }
    if let Some(hash) = plain_hash(core.as_bytes()) {
        return Some(hash);
    }
    // Code spans and emphasis (`pytest x.py` failed, **bold**): without their marks, most
    // such items are plain, and the marks are found by a vectorized search.
    if core.is_ascii() && memchr::memchr2(b'`', b'*', core.as_bytes()).is_some() {
        buffer.clear();
        let bytes = core.as_bytes();
        let mut from = 0;
        for at in memchr::memchr2_iter(b'`', b'*', bytes) {
            buffer.extend_from_slice(bytes.get(from..at).unwrap_or_default());
            from = at + 1;
        }
        buffer.extend_from_slice(bytes.get(from..).unwrap_or_default());
        let unmarked = buffer.trim_ascii();
        let unmarked = unmarked
            .iter()
            .position(|byte| !is_trimmed(*byte))
            .and_then(|start| {
                let end = unmarked.iter().rposition(|byte| !is_trimmed(*byte))?;
                unmarked.get(start..=end)
            })
            .unwrap_or_default();
        if unmarked.is_empty() {
            return None;
        }
        if let Some(hash) = plain_hash(unmarked) {
            return Some(hash);
        }
    }
    write_key(item, buffer);
    hash_of_key(buffer)
}

/// The part of an item its key is compared on (see [`key_of_core_is`]).
pub(crate) fn comparable_core(item: &str) -> &str {
    trimmed_core(item)
}

/// Bytes a key trims from both ends.
fn is_trimmed(byte: u8) -> bool {
    matches!(byte, b'_' | b'.' | b' ')
}

/// The hash of an already built key (see [`key_hash`]); `None` when it is empty.
pub fn hash_of_key(key: impl AsRef<[u8]>) -> Option<u64> {
    let key = key.as_ref();
    (!key.is_empty()).then(|| hash_key_bytes(key))
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
/// The hash of the empty key before mixing; every hash starts from it and the key's length.
const SEED: u64 = 0x2545_f491_4f6c_dd1d;

/// ASCII capitals of a block lower-cased; other bytes (UTF-8 continuation bytes included)
/// unchanged.
fn ascii_lower(word: u64) -> u64 {
    let low = word & !HIGH;
    // Adding without carries between bytes: every byte of `low` is at most 0x7f.
    let at_least_a = low.wrapping_add(ONES * (0x80 - u64::from(b'A')));
    let past_z = low.wrapping_add(ONES * (0x80 - u64::from(b'Z') - 1));
    let capitals = at_least_a & !past_z & !word & HIGH;
    word | (capitals >> 2)
}

/// One mixing step: a bijection of `hash` for a fixed block.
fn mix(hash: u64, block: u64) -> u64 {
    (hash.rotate_left(23) ^ block).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The final avalanche (MurmurHash3's 64-bit finalizer).
fn finish(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

/// Hashes key bytes, lower-casing ASCII capitals on the way (a no-op on a built key).
fn hash_key_bytes(bytes: &[u8]) -> u64 {
    let mut hash = SEED ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut block = [0u8; 8];
        block.copy_from_slice(chunk);
        hash = mix(hash, ascii_lower(u64::from_le_bytes(block)));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut block = [0u8; 8];
        for (slot, byte) in block.iter_mut().zip(rest) {
            *slot = *byte;
        }
        hash = mix(hash, ascii_lower(u64::from_le_bytes(block)));
    }
    finish(hash)
}

/// The hash of the key of `core` (an item's core, already trimmed of what a key trims) when
/// the key is `core` lower-cased: ASCII, no emphasis mark, no whitespace but single spaces.
/// `None` otherwise.
fn plain_hash(core: &[u8]) -> Option<u64> {
    is_plain(core).then(|| hash_key_bytes(core))
}

/// True when `core` is plain (see [`plain_hash`]), read 8 bytes at a time.
pub(crate) fn is_plain(core: &[u8]) -> bool {
    is_plain_after(core, 0)
}

/// [`is_plain`] of bytes that follow plain ones, the last of which was a space when
/// `previous_space` is 1.
#[inline(always)]
fn is_plain_after(core: &[u8], mut previous_space: u64) -> bool {
    let mut chunks = core.chunks_exact(8);
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        match plain_block(u64::from_le_bytes(bytes), previous_space) {
            Some(space) => previous_space = space,
            None => return false,
        }
    }
    let rest = chunks.remainder();
    if rest.is_empty() {
        return true;
    }
    // Padded with a letter, which is plain and no space.
    let mut bytes = [b'a'; 8];
    for (slot, byte) in bytes.iter_mut().zip(rest) {
        *slot = *byte;
    }
    plain_block(u64::from_le_bytes(bytes), previous_space).is_some()
}

/// Checks one block of 8 bytes: `None` when it holds a byte of a multi-byte character, a
/// control byte (the ASCII whitespace other than the space among them), an emphasis mark or
/// two spaces in a row (`previous_space`: the last byte of the block before was a space).
/// Otherwise whether its last byte is a space.
fn plain_block(block: u64, previous_space: u64) -> Option<u64> {
    if block & HIGH != 0 {
        return None;
    }
    // Every byte is below 0x80 from here. Whether a byte is below `n` (exact as to whether
    // there is one: a borrow only runs on from a byte that is).
    let below = |n: u8| block.wrapping_sub(ONES * u64::from(n)) & !block & HIGH;
    // The high bit of each byte equal to `n`, exactly: a byte of `x` below 0x80 plus 0x7f
    // reaches 0x80, without a carry, unless it is zero.
    let equal = |n: u8| !(block ^ (ONES * u64::from(n))).wrapping_add(!HIGH) & HIGH;
    let spaces = equal(b' ');
    let doubled = spaces & ((spaces << 8) | (previous_space << 7));
    if below(b' ') | equal(b'*') | equal(b'`') | doubled != 0 {
        return None;
    }
    Some(spaces >> 63)
}

/// [`plain_hash`] from one reading of the core instead of two (one to check it is plain,
/// one to hash it), 8 bytes at a time.
#[cfg(test)]
pub(crate) fn plain_key_hash(core: &[u8]) -> Option<u64> {
    let mut hash = SEED ^ core.len() as u64;
    let mut previous_space = 0u64;
    let mut chunks = core.chunks_exact(8);
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let block = u64::from_le_bytes(bytes);
        previous_space = plain_block(block, previous_space)?;
        hash = mix(hash, ascii_lower(block));
    }
    let rest = chunks.remainder().len();
    if rest > 0 {
        // Zero-padded for the hash, padded with letters for the plainness check.
        let block = tail_block(core, rest);
        let letters = (ONES * u64::from(b'a')) << (8 * rest);
        plain_block(block | letters, previous_space)?;
        hash = mix(hash, ascii_lower(block));
    }
    Some(finish(hash))
}

/// True when the key of `item` is `key`, for tests.
#[cfg(test)]
fn key_is(item: &str, key: &str, buffer: &mut String) -> bool {
    key_of_core_is(item, trimmed_core(item), key, buffer)
}

/// True when the key of `item` (whose [`comparable_core`] is `core`, read once for several
/// keys) is `key` (a key as [`item_key`] builds it, not empty). Most items are told apart by
/// their first bytes: the core, lower-cased, is compared with `key` up to the first
/// difference, and only when an unusual byte (see [`plain_hash`]) comes before it is the
/// item's key built.
// Inlined into its one caller's loop over old items: called for every (item, key) pair, most
// of them told apart within two or three blocks, it spent a sixth of its instructions
// entering and leaving the call.
#[inline(always)]
pub(crate) fn key_of_core_is(item: &str, core: &str, key: &str, buffer: &mut String) -> bool {
    let core = core.as_bytes();
    let expected = key.as_bytes();
    // Where the core lower-cased first differs from `key` (8 bytes at a time, then byte by
    // byte), or where the shorter ends. Equal blocks are plain when ASCII (see below), and the
    // bytes read past them are checked (`checked` bytes, the last of them a space when
    // `previous_space` says so).
    let shorter = core.len().min(expected.len());
    let mut same = 0;
    let mut previous_space = 0u64;
    let mut diverged = false;
    while let (Some(ours), Some(theirs)) = (core.get(same..same + 8), expected.get(same..same + 8))
    {
        let ours = block_of(ours);
        let difference = ascii_lower(ours) ^ block_of(theirs);
        if difference != 0 {
            // The first differing byte (little-endian: the lowest). The bytes read up to it
            // and it are checked in the block itself, the others made letters: while they are
            // plain, the keys differ there.
            let first = difference.trailing_zeros() / 8;
            let read = if first == 7 {
                u64::MAX
            } else {
                (1u64 << (8 * (first + 1))) - 1
            };
            let letters = ONES * u64::from(b'a');
            if plain_block((ours & read) | (letters & !read), previous_space).is_some() {
                return false;
            }
            same += first as usize;
            diverged = true;
            break;
        }
        // Equal to a block of a key, which holds no emphasis mark, no whitespace but single
        // spaces and no capital, the block is plain unless it is not ASCII.
        if ours & HIGH != 0 {
            return item_key_in(item, buffer) == key;
        }
        previous_space = u64::from(ours >> 56 == u64::from(b' '));
        same += 8;
    }
    let checked = if diverged { same - same % 8 } else { same };
    if !diverged {
        while same < shorter
            && core
                .get(same)
                .zip(expected.get(same))
                .is_some_and(|(ours, theirs)| ours.to_ascii_lowercase() == *theirs)
        {
            same += 1;
        }
    }
    // The bytes read to decide: up to the first difference, or the whole core. While they are
    // plain, the item's key is the core lower-cased, and the core ends with a character a key
    // keeps, so a longer core has a longer key.
    let read = core
        .get(checked..core.len().min(same + 1))
        .unwrap_or_default();
    if !is_plain_after(read, previous_space) {
        return item_key_in(item, buffer) == key;
    }
    same == core.len() && same == expected.len()
}

/// The last `rest` bytes of `bytes` (1 to 7) as a zero-padded block: from the last 8 bytes
/// shifted when there are 8, so no copy is needed.
#[cfg(test)]
fn tail_block(bytes: &[u8], rest: usize) -> u64 {
    let len = bytes.len();
    match len.checked_sub(8).and_then(|start| bytes.get(start..)) {
        Some(last) if (1..8).contains(&rest) => block_of(last) >> (8 * (8 - rest)),
        _ => block_of(bytes.get(len.saturating_sub(rest)..).unwrap_or_default()),
    }
}

/// Eight bytes as a little-endian block (zero-padded when fewer).
fn block_of(bytes: &[u8]) -> u64 {
    let mut block = [0u8; 8];
    for (slot, byte) in block.iter_mut().zip(bytes) {
        *slot = *byte;
    }
    u64::from_le_bytes(block)
}

/// Key hashes are already mixed: a set of them hashes each by itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// A set of key hashes (see [`key_hash`]).
pub(crate) type KeySet = HashSet<u64, BuildHasherDefault<PassThrough>>;

/// Which items a body holds, by the hash of their keys (see [`key_hash`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ItemKeys(Vec<u64>);

impl ItemKeys {
    /// The keys of a body's items.
    pub fn of(body: &str) -> Self {
        Self::from_keys(items(body))
    }

    /// The keys of items already read out of a body.
    pub(crate) fn of_items(items: &[&str]) -> Self {
        Self::from_keys(items.iter().copied())
    }

    fn from_keys<'a>(items: impl Iterator<Item = &'a str>) -> Self {
        let mut buffer = Vec::new();
        let mut keys: Vec<u64> = items
            .filter_map(|item| key_hash_with(item, &mut buffer))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Self(keys)
    }

    /// True when the body has an item with this key hash.
    pub fn contains(&self, hash: u64) -> bool {
        self.0.binary_search(&hash).is_ok()
    }
}

/// `candidates` without empty items and without those whose key the body already has or an
/// earlier candidate repeats.
pub fn fresh_items<S: AsRef<str>>(candidates: &[S], existing: &ItemKeys) -> Vec<String> {
    let mut buffer = Vec::new();
    let mut seen = KeySet::default();
    candidates
        .iter()
        .map(AsRef::as_ref)
        .filter(|item| match key_hash_with(item, &mut buffer) {
            Some(hash) => !existing.contains(hash) && seen.insert(hash),
            None => false,
        })
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn key_hashes_agree_with_keys() {
        for item in [
            "- [resolved] **Fix**  the `parser`.",
            "_ x",
            "a ._ b_.",
            "*",
            "",
            "ÉCOLE  Ünïcode",
            "..x..",
            "x _ y",
            "Tide importer migration part 12",
            "a  b",
            "exactly8 ",
            "exactly8 bytes_ab",
            "seven b  x",
            "tab\there",
        ] {
            assert_eq!(key_hash(item), hash_of_key(item_key(item)), "{item:?}");
        }
    }

    #[test]
    fn the_fast_path_takes_only_plain_text() {
        assert!(plain_hash(b"Import batch 3 with the CSV parser").is_some());
        for unusual in [
            &b"two  spaces"[..],
            b"exactly8  split",
            b"1234567  x",
            b"tab\there",
            b"**bold**",
            b"`code`",
            "é".as_bytes(),
        ] {
            assert!(plain_hash(unusual).is_none(), "{unusual:?}");
        }
    }

    #[test]
    fn capitals_and_only_capitals_are_lowered() {
        let all: Vec<u8> = (0..=255).collect();
        for chunk in all.chunks_exact(8) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            let block = u64::from_le_bytes(bytes);
            let lowered = ascii_lower(block).to_le_bytes();
            for (byte, lower) in block.to_le_bytes().iter().zip(lowered) {
                assert_eq!(lower, byte.to_ascii_lowercase(), "{byte:#x}");
            }
        }
    }

    /// The definition of a key, written plainly: what the one-pass writer must produce.
    fn plain_key(item: &str) -> String {
        let without_marks: String = key_core(item)
            .chars()
            .filter(|ch| !matches!(ch, '*' | '`'))
            .collect();
        let collapsed = without_marks
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let lower: String = collapsed.chars().flat_map(char::to_lowercase).collect();
        lower.trim_matches(['_', '.', ' ']).to_owned()
    }

    #[test]
    fn keys_follow_the_definition() {
        for item in [
            "- [resolved] **Fix**  the `parser`.",
            "_ x",
            "x _ y_ ._",
            "a * b",
            "ΣΑΣ  Ünïcode\u{a0}x",
            "..",
            "x\u{2003}.\u{2003}",
        ] {
            assert_eq!(item_key(item), plain_key(item), "{item:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        #[test]
        fn key_is_compares_keys(
            item in "([- *`_.aAbB\t1é]{0,12}|[ aAbB]{8,30})",
            other in "([- *`_.aAbB\t1é]{0,12}|[ aAbB]{8,30})",
        ) {
            let key = item_key(&other);
            prop_assume!(!key.is_empty());
            let mut buffer = String::new();
            // A long shared prefix reaches the 8-byte comparison.
            let longer = format!("{key}{item}");
            prop_assert_eq!(key_is(&longer, &key, &mut buffer), item_key(&longer) == key);
            prop_assert_eq!(key_is(&item, &key, &mut buffer), item_key(&item) == key);
            prop_assert!(key_is(&other, &key, &mut buffer));
        }

        /// Equal blocks read as plain: keys with control bytes, other scripts, marks and
        /// runs of spaces are still told apart exactly.
        #[test]
        fn key_is_compares_keys_of_any_bytes(
            head in "[ aA\x01\x1f\x7f*`\t\u{a0}ÉéİΣ_.]{0,20}",
            item in "[ aA\x01\x1f\x7f*`\t\u{a0}ÉéİΣ_.]{0,20}",
            other in "[ aA\x01\x1f\x7f*`\t\u{a0}ÉéİΣ_.]{0,20}",
        ) {
            let mut buffer = String::new();
            for (candidate, source) in [
                (format!("{head}{item}"), format!("{head}{other}")),
                (format!("{head}{item}"), format!("{head}{item}")),
                (item, other),
            ] {
                let key = item_key(&source);
                if key.is_empty() {
                    continue;
                }
                prop_assert_eq!(
                    key_is(&candidate, &key, &mut buffer),
                    item_key(&candidate) == key,
                    "{:?} {:?}", candidate, key
                );
            }
        }

        #[test]
        fn trimmed_cores_of_code_spans_trim_like_str(item in "[`_.][ \t`_.*a\\[\\]é-]{0,10}[a`_.]") {
            let expected = key_core(&item)
                .trim_matches(|ch: char| ch.is_whitespace() || matches!(ch, '_' | '.' | '*' | '`'));
            prop_assert_eq!(trimmed_core(&item), expected);
        }

        #[test]
        fn trimmed_cores_trim_like_str(item in "[ \t\x0b_.*`a\u{a0}\u{2003}é]{0,12}|(a|Z|- |1. |\\[new\\] |[ \t\x0b_.*`\u{a0}\u{2003}é]){0,8}") {
            let expected = key_core(&item)
                .trim_matches(|ch: char| ch.is_whitespace() || matches!(ch, '_' | '.' | '*' | '`'));
            prop_assert_eq!(trimmed_core(&item), expected);
        }

        /// The last bytes of a text, read from its last 8, are the bytes themselves.
        #[test]
        fn tail_blocks_are_the_last_bytes(bytes in proptest::collection::vec(any::<u8>(), 1..20), rest in 1usize..8) {
            let rest = rest.min(bytes.len());
            let tail = bytes.get(bytes.len() - rest..).unwrap_or_default();
            prop_assert_eq!(tail_block(&bytes, rest), block_of(tail));
        }

        /// A key appended in place is the key.
        #[test]
        fn pushed_keys_are_keys(item in "[ aAzZ*`\t\x00\x7fé~._\\[\\]-]{0,40}|- \\[new\\] [a-zA-Z ]{0,20}", before in "[a-z]{0,4}") {
            let mut out = before.clone();
            push_item_key(&item, &mut out, &mut String::new());
            prop_assert_eq!(out, format!("{before}{}", item_key(&item)));
        }

        /// One reading of a core gives what checking it is plain and hashing it give.
        #[test]
        fn plain_key_hashes_are_plain_hashes(core in "[ aAzZ*`\t\x00\x7fé~.]{0,40}") {
            prop_assert_eq!(plain_key_hash(core.as_bytes()), plain_hash(core.as_bytes()));
        }

        #[test]
        fn plain_is_its_definition(core in "[ a*`\t\x00\x7fé~]{0,40}") {
            let bytes = core.as_bytes();
            let plain = bytes
                .iter()
                .all(|byte| (b' '..0x80).contains(byte) && !matches!(byte, b'*' | b'`'))
                && !core.contains("  ");
            prop_assert_eq!(is_plain(bytes), plain);
        }

        #[test]
        fn keys_of_any_text_follow_the_definition(item in "[- *`_.aAbBzZ\\[\\]\t\n1é\u{a0}Σ]{0,24}|\\PC{0,40}") {
            prop_assert_eq!(item_key(&item), plain_key(&item));
        }

        #[test]
        fn hashes_are_hashes_of_keys(item in "[- *`_.aAbBzZ\\[\\]\t\n\x0b\x0c1é\u{a0}]{0,24}") {
            prop_assert_eq!(key_hash(&item), hash_of_key(item_key(&item)));
        }

        #[test]
        fn hashes_of_any_text_are_hashes_of_keys(item in any::<String>()) {
            prop_assert_eq!(key_hash(&item), hash_of_key(item_key(&item)));
        }
    }
}
