//! The keyword automaton as a flat transition table, walked at four places of the text at once.
//!
//! Finding the rules' keywords is the one pass over every byte, and with some 350 keywords the
//! Aho-Corasick DFA no longer fits the first-level cache: each step waits for the load of the
//! next state before it can take the one after, so the search ran at the latency of that load
//! and took half of all redaction time. The text is cut into four parts walked in one loop;
//! the four chains of loads are independent, so they overlap in the processor and the pass
//! runs about three times faster, with the same automaton.
//!
//! The table is read off `aho_corasick`'s DFA (standard match semantics, every match reported,
//! overlapping ones too) through its public `Automaton` interface, so the hits are exactly those
//! of `find_overlapping_iter`; a test compares the two. State ids are premultiplied by the row
//! length, so a step is two loads and an add; the ids of states that report matches carry a
//! flag bit above the table's index range, masked off when indexing, so one test of the four
//! states OR-ed together says whether any part has something to report.

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};

/// Texts shorter than this are walked in one piece: cutting them saves nothing.
const MIN_SPLIT: usize = 4096;
/// Room for transitions (4 MiB, of which only the part used is ever touched): a fixed power of
/// two, so a step indexes the table under a mask and needs no bounds check. The rules' table
/// uses about a tenth; a larger one is refused, an error the engine reports.
const TABLE: usize = 1 << 20;
/// The flag on the ids of states that report matches.
const MATCH: u32 = 1 << 20;

/// A keyword hit: the keyword's index and where it lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Hit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) keyword: usize,
}

pub(crate) struct KeywordDfa {
    /// The row column of each byte.
    classes: [u8; 256],
    /// Row-major transitions; a state id is its row's offset.
    trans: Box<[u32; TABLE]>,
    start: u32,
    /// The row offset of the first state that reports matches (they are numbered last).
    first_match: u32,
    /// The row length.
    stride: u32,
    /// For match state `k` (in order of numbering), its keywords are
    /// `match_keywords[match_offsets[k]..match_offsets[k + 1]]`.
    match_offsets: Vec<usize>,
    match_keywords: Vec<u32>,
    /// Byte length of each keyword.
    lengths: Vec<usize>,
    max_len: usize,
}

impl KeywordDfa {
    /// Builds the automaton for `keywords`, matched ASCII case-insensitively.
    pub(crate) fn build(keywords: &[&str]) -> Result<KeywordDfa, String> {
        let dfa = DFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(keywords)
            .map_err(|e| e.to_string())?;
        let start = dfa
            .start_state(Anchored::No)
            .map_err(|error| error.to_string())?;
        // Every state reachable from the start, in the order found, with its 256 transitions
        // as indexes into that order (row-major), so the steps below read them from one table.
        // States are numbered through a dense table over the DFA's ids: hashing every id, and
        // every whole byte column below, took about half of a process's first redaction. The
        // ids index the DFA's transitions (four bytes each), so they stay below this.
        let limit = dfa.memory_usage() / 4 + 1;
        let mut index: Vec<u32> = Vec::new();
        let mut states = vec![start];
        number_state(&mut index, limit, start, 0)?;
        let mut next: Vec<u32> = Vec::new();
        // A running hash of each byte's column, so only bytes whose hashes agree are compared.
        let mut fingerprints = [0u64; 256];
        let mut current = 0;
        while let Some(&state) = states.get(current) {
            if dfa.is_dead(state) {
                // An unanchored standard search never dies; if it could, this table could not
                // stop where the DFA stops.
                return Err("keyword automaton has a dead state".to_owned());
            }
            for byte in 0..=255u8 {
                let to = dfa.next_state(Anchored::No, state, byte);
                let number = match index.get(to.as_usize()) {
                    Some(&number) if number != UNNUMBERED => number,
                    _ => {
                        let number = to_u32(states.len())?;
                        number_state(&mut index, limit, to, number)?;
                        states.push(to);
                        number
                    }
                };
                next.push(number);
                if let Some(fingerprint) = fingerprints.get_mut(usize::from(byte)) {
                    *fingerprint = (*fingerprint ^ u64::from(number)).wrapping_mul(FNV_PRIME);
                }
            }
            current += 1;
        }
        let target = |state: usize, byte: u8| {
            next.get(state * 256 + usize::from(byte))
                .copied()
                .unwrap_or_default()
        };
        // Bytes whose transitions agree in every state share a column: each byte is compared,
        // whole column against whole column, with the first byte of each column found so far
        // whose hash matches its own.
        let fingerprint = |byte: u8| fingerprints.get(usize::from(byte)).copied();
        let mut classes = [0u8; 256];
        let mut representatives: Vec<u8> = Vec::new();
        for (byte, class) in (0..=255u8).zip(classes.iter_mut()) {
            let same = representatives.iter().position(|&rep| {
                fingerprint(rep) == fingerprint(byte)
                    && (0..states.len()).all(|s| target(s, rep) == target(s, byte))
            });
            *class = match same {
                Some(column) => u8::try_from(column).unwrap_or(u8::MAX),
                None => {
                    representatives.push(byte);
                    u8::try_from(representatives.len() - 1).unwrap_or(u8::MAX)
                }
            };
        }
        let stride = representatives.len();
        if states.len().saturating_mul(stride) > TABLE {
            return Err(format!(
                "keyword automaton too large: {} states",
                states.len()
            ));
        }
        // Number states without matches first.
        let (plain, matching): (Vec<usize>, Vec<usize>) =
            (0..states.len()).partition(|&i| states.get(i).is_some_and(|&s| !dfa.is_match(s)));
        let order: Vec<usize> = plain.iter().chain(&matching).copied().collect();
        let mut id_of = vec![0u32; states.len()];
        for (number, &old) in order.iter().enumerate() {
            if let Some(slot) = id_of.get_mut(old) {
                let flag = if number < plain.len() { 0 } else { MATCH };
                *slot = to_u32(number * stride)? | flag;
            }
        }
        let mut trans: Box<[u32; TABLE]> = vec![0; TABLE]
            .into_boxed_slice()
            .try_into()
            .map_err(|_| "keyword automaton table")?;
        let mut slots = trans.iter_mut();
        for &old in &order {
            for &byte in &representatives {
                let to = usize::try_from(target(old, byte))
                    .ok()
                    .and_then(|i| id_of.get(i))
                    .copied()
                    .ok_or("transition out of range")?;
                if let Some(slot) = slots.next() {
                    *slot = to;
                }
            }
        }
        let mut match_offsets = vec![0];
        let mut match_keywords = Vec::new();
        for &old in &matching {
            let state = states.get(old).copied().ok_or("state out of range")?;
            for i in 0..dfa.match_len(state) {
                match_keywords.push(dfa.match_pattern(state, i).as_u32());
            }
            match_offsets.push(match_keywords.len());
        }
        Ok(KeywordDfa {
            classes,
            trans,
            start: id_of.first().copied().unwrap_or_default(),
            first_match: to_u32(plain.len() * stride)?,
            stride: to_u32(stride)?,
            match_offsets,
            match_keywords,
            lengths: keywords.iter().map(|k| k.len()).collect(),
            max_len: keywords.iter().map(|k| k.len()).max().unwrap_or(0),
        })
    }

    /// Appends every keyword occurrence in `text`, overlapping ones included, to `hits`.
    pub(crate) fn hits(&self, text: &[u8], hits: &mut Vec<Hit>) {
        let quarter = text.len() / 4;
        if text.len() < MIN_SPLIT || quarter < self.max_len {
            self.walk(text, 0, 0, text.len(), self.start, hits);
            return;
        }
        // Part `i` reports the hits ending in `bounds[i]..bounds[i + 1]` (after its first
        // byte); it starts a keyword's length early, from the start state, so a keyword
        // crossing into it is seen whole.
        let bounds = [0, quarter, 2 * quarter, 3 * quarter, text.len()];
        let lead = self.max_len.saturating_sub(1);
        let from = [0, quarter - lead, 2 * quarter - lead, 3 * quarter - lead];
        // The shortest part, walked in step by all four.
        let steps = quarter - lead;
        let part = |i: usize| {
            let start = from.get(i).copied().unwrap_or_default();
            text.get(start..start + steps).unwrap_or_default()
        };
        // Four plain locals rather than an array, so the states stay in registers.
        let step = |state: u32, byte: u8| self.step(state, byte);
        let (mut s0, mut s1, mut s2, mut s3) = (self.start, self.start, self.start, self.start);
        let mut pending = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        let (a, b, c, d) = (part(0), part(1), part(2), part(3));
        for (offset, (((&x, &y), &z), &w)) in a.iter().zip(b).zip(c).zip(d).enumerate() {
            s0 = step(s0, x);
            s1 = step(s1, y);
            s2 = step(s2, z);
            s3 = step(s3, w);
            if (s0 | s1 | s2 | s3) & MATCH != 0 {
                for ((s, start), pending) in
                    [s0, s1, s2, s3].into_iter().zip(from).zip(&mut pending)
                {
                    if s & MATCH != 0 {
                        pending.push((s, start + offset + 1));
                    }
                }
            }
        }
        let state = [s0, s1, s2, s3];
        // Each part then walks on alone to its end; hits are reported part by part, in order.
        for (i, pending) in pending.iter().enumerate() {
            let floor = bounds.get(i).copied().unwrap_or_default();
            for &(state, end) in pending {
                if end > floor {
                    self.report(state, end, hits);
                }
            }
            let resume = from.get(i).copied().unwrap_or_default() + steps;
            let to = bounds.get(i + 1).copied().unwrap_or(text.len());
            let state = state.get(i).copied().unwrap_or(self.start);
            self.walk(text, floor, resume, to, state, hits);
        }
    }

    /// Walks `text[from..to]` from `state`, reporting the hits that end after `floor`.
    fn walk(
        &self,
        text: &[u8],
        floor: usize,
        from: usize,
        to: usize,
        mut state: u32,
        hits: &mut Vec<Hit>,
    ) {
        let bytes = text.get(from..to).unwrap_or_default();
        for (offset, &byte) in bytes.iter().enumerate() {
            state = self.step(state, byte);
            if state & MATCH != 0 && from + offset + 1 > floor {
                self.report(state, from + offset + 1, hits);
            }
        }
    }

    #[inline(always)]
    fn step(&self, state: u32, byte: u8) -> u32 {
        let class = self.classes[usize::from(byte)];
        // The mask drops the match flag and keeps the index in the table.
        self.trans[(state as usize + usize::from(class)) & (TABLE - 1)]
    }

    fn report(&self, state: u32, end: usize, hits: &mut Vec<Hit>) {
        let row = state & (MATCH - 1);
        let number = (row.saturating_sub(self.first_match) / self.stride) as usize;
        let (Some(&from), Some(&to)) = (
            self.match_offsets.get(number),
            self.match_offsets.get(number + 1),
        ) else {
            return;
        };
        for &keyword in self.match_keywords.get(from..to).unwrap_or_default() {
            let keyword = keyword as usize;
            let len = self.lengths.get(keyword).copied().unwrap_or(0);
            hits.push(Hit {
                start: end - len,
                end,
                keyword,
            });
        }
    }
}

/// The 64-bit FNV prime, the multiplier of the column hashes.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// A slot of the numbering table no state has taken.
const UNNUMBERED: u32 = u32::MAX;

/// Records `number` for the DFA state `state` (an id below `limit`), growing the table as ids
/// come.
fn number_state(
    index: &mut Vec<u32>,
    limit: usize,
    state: aho_corasick::automaton::StateID,
    number: u32,
) -> Result<(), String> {
    let id = state.as_usize();
    if id >= limit {
        return Err(format!("keyword automaton state id {id} out of range"));
    }
    if index.len() <= id {
        index.resize(id + 1, UNNUMBERED);
    }
    if let Some(slot) = index.get_mut(id) {
        *slot = number;
    }
    Ok(())
}

fn to_u32(value: usize) -> Result<u32, String> {
    u32::try_from(value).map_err(|_| "keyword automaton too large".to_owned())
}

#[cfg(test)]
mod tests {
    use aho_corasick::AhoCorasick;
    use proptest::prelude::*;

    use super::*;

    const KEYWORDS: [&str; 9] = [
        "token",
        "key",
        "s.",
        "pass",
        "password",
        "aaaa",
        "aaaaaaaaaa",
        "eaaa",
        "-u ",
    ];

    fn reference(keywords: &[&str], text: &[u8]) -> Vec<Hit> {
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(keywords)
            .unwrap();
        let mut hits: Vec<Hit> = automaton
            .find_overlapping_iter(text)
            .map(|m| Hit {
                start: m.start(),
                end: m.end(),
                keyword: m.pattern().as_usize(),
            })
            .collect();
        hits.sort_unstable();
        hits
    }

    fn ours(keywords: &[&str], text: &[u8]) -> Vec<Hit> {
        let dfa = KeywordDfa::build(keywords).unwrap();
        let mut hits = Vec::new();
        dfa.hits(text, &mut hits);
        hits.sort_unstable();
        hits
    }

    /// Text made of keyword pieces, so hits are dense, overlap and cross the cuts.
    fn text() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            prop::sample::select(KEYWORDS.to_vec()).prop_map(|k| k.as_bytes().to_vec()),
            prop::sample::select(vec!["A", "E", "S", ".", " ", "-u", "TOKEN", "Pass", "\n"])
                .prop_map(|k| k.as_bytes().to_vec()),
            prop::collection::vec(any::<u8>(), 1..8),
        ];
        prop::collection::vec(piece, 0..3000).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn hits_are_those_of_the_overlapping_search(text in text()) {
            prop_assert_eq!(ours(&KEYWORDS, &text), reference(&KEYWORDS, &text));
        }
    }

    #[test]
    fn hits_across_the_cuts_are_reported_once() {
        // Keywords everywhere, in texts around the length where the walk splits in four.
        for len in [
            0,
            1,
            9,
            MIN_SPLIT - 1,
            MIN_SPLIT,
            MIN_SPLIT + 1,
            MIN_SPLIT + 3,
            20_011,
        ] {
            let text: Vec<u8> = b"aaaaaaaaaaa password s.token"
                .iter()
                .copied()
                .cycle()
                .take(len)
                .collect();
            assert_eq!(ours(&KEYWORDS, &text), reference(&KEYWORDS, &text), "{len}");
        }
    }

    #[test]
    fn the_rules_keywords_build() {
        let keywords: Vec<&str> = crate::redact::rules::all()
            .flat_map(|rule| rule.keywords.iter().copied())
            .collect();
        assert!(KeywordDfa::build(&keywords).is_ok());
    }
}
