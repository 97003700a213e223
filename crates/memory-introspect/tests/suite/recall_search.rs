//! Recall and search that say why: queries simplified instead of dropped, common words and a
//! minimum score for recall, some-word matches after all-word ones, unspaced scripts, and
//! empty results that say whether the index is fresh.

use memory_introspect::RECALL_MIN_TERMS;
use memory_protocol::introspect::{
    MemoryIndexState, MemoryNoteRequest, MemorySearchRequest, MemorySearchResult,
};

use super::*;

fn search(introspector: &Introspector, query: &str) -> MemorySearchResult {
    introspector
        .search(&MemorySearchRequest {
            query: query.to_owned(),
            ..MemorySearchRequest::default()
        })
        .unwrap()
}

fn note(introspector: &Introspector, text: &str) -> String {
    introspector
        .note(&MemoryNoteRequest {
            text: text.to_owned(),
            topic: None,
            ..MemoryNoteRequest::default()
        })
        .unwrap()
        .path
}

#[test]
fn an_oddly_quoted_message_is_recalled_not_dropped() {
    let home = Home::new();
    home.consolidated();
    home.write(
        "rollout_summaries/2026-03-13T10-00-00-ci.md",
        "thread_id: t-0\n\n# cargo test fails on CI when the fixtures are not checked out.\n",
    );
    let introspector = home.introspector();
    let recall = introspector
        .recall("why does \"cargo test fail on CI?", 3)
        .unwrap();
    assert!(recall.hits >= 1, "{recall:#?}");
    assert!(
        recall.text.contains("fixtures are not checked out"),
        "{}",
        recall.text
    );
    assert!(
        recall
            .note
            .as_deref()
            .unwrap()
            .contains("unclosed double quote"),
        "{recall:#?}"
    );
    // The tool takes the same query and says how it read it.
    let result = search(&introspector, "why does \"cargo test fail on CI?");
    assert!(result.hits[0].path.ends_with("ci.md"), "{result:#?}");
    assert!(result.warning.unwrap().contains("unclosed double quote"));
}

#[test]
fn a_message_over_a_thousand_characters_is_reduced_to_key_terms() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let message = format!(
        "{} Anyway, the bank import broke again at midnight.",
        "I was looking at the logs and there was a lot going on. ".repeat(25)
    );
    assert!(message.chars().count() > 1_000);
    let recall = introspector.recall(&message, 3).unwrap();
    assert!(recall.hits >= 1, "{recall:#?}");
    assert!(recall.text.contains("24:00"), "{}", recall.text);
    assert!(recall.note.unwrap().contains("key terms"));
    let result = search(&introspector, &message);
    assert!(!result.hits.is_empty());
    assert!(
        result
            .warning
            .unwrap()
            .contains("longer than 1000 characters")
    );
}

#[test]
fn common_words_recall_nothing_and_say_why() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let recall = introspector
        .recall("what is it that you do there?", 3)
        .unwrap();
    assert_eq!((recall.hits, recall.text.as_str()), (0, ""), "{recall:#?}");
    assert!(recall.note.unwrap().contains("only common words"));
    // "the" and "is" are in every passage; with them left out the message has two key terms
    // and no passage holds both.
    let recall = introspector
        .recall("what is the weather like in the ledger town", 3)
        .unwrap();
    assert_eq!(recall.hits, 0, "{recall:#?}");
    let why = recall.note.unwrap();
    assert!(
        why.contains(&format!("no passage holds {RECALL_MIN_TERMS}")),
        "{why}"
    );
    assert!(why.contains("index fresh"), "{why}");
}

#[test]
fn recall_needs_the_minimum_score_and_ranks_passages_holding_more_terms_first() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    // "midnight" alone is in two passages; "midnight" with "normalize" in one.
    let recall = introspector
        .recall("how do we normalize midnight?", 3)
        .unwrap();
    assert_eq!(recall.hits, 1, "{recall:#?}");
    assert!(recall.text.contains("parse_timestamp"), "{}", recall.text);
    // One key term: a passage holding it is enough.
    let recall = introspector.recall("semicolons?", 3).unwrap();
    assert_eq!(recall.hits, 0);
    let recall = introspector.recall("midnight?", 3).unwrap();
    assert!(recall.hits >= 1, "{recall:#?}");
}

#[test]
fn search_finds_a_note_holding_some_of_the_words_after_those_holding_all() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let path = note(&introspector, "User prefers cargo nextest over cargo test");
    let result = search(&introspector, "what test runner does the user prefer");
    assert_eq!(
        result.hits.first().map(|hit| hit.path.as_str()),
        Some(path.as_str())
    );
    assert!(!result.hits[0].all_terms);
    assert!(
        result
            .warning
            .unwrap()
            .contains("common words left out: what does the"),
        "the answer says how the query was read"
    );
    // With every word present the note is an all-terms hit.
    let exact = search(&introspector, "user prefers nextest");
    assert_eq!(exact.hits[0].path, path);
    assert!(exact.hits[0].all_terms);
}

/// A query of common words only (`when the`) is searched as the phrase those words make: each
/// word alone is in most blocks and weighs nothing in the ranking, and scoring every block
/// that holds either was the slowest search at 100,000 blocks.
#[test]
fn a_query_of_common_words_only_is_searched_as_their_phrase() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let phrase = note(&introspector, "Roll back when the deploy check fails.");
    note(
        &introspector,
        "The parser reads the file when asked; then the cache warms.",
    );
    let result = search(&introspector, "when the");
    let paths: Vec<&str> = result.hits.iter().map(|hit| hit.path.as_str()).collect();
    assert_eq!(paths, [phrase.as_str()], "{result:#?}");
    assert!(
        result
            .warning
            .as_deref()
            .unwrap()
            .contains(r#"searched as the phrase "when the""#),
        "{result:#?}"
    );
}

#[test]
fn words_inside_unspaced_scripts_are_found() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let path = note(&introspector, "用户偏好使用制表符缩进");
    for query in ["制表符", "缩进", "偏", "用户偏好", "使用制表符缩进"] {
        let result = search(&introspector, query);
        assert_eq!(
            result.hits.first().map(|hit| hit.path.as_str()),
            Some(path.as_str()),
            "{query}: {result:#?}"
        );
        assert!(result.hits[0].snippet.contains("制表符"), "{query}");
    }
    // Characters that are not adjacent in the text are not a match.
    assert!(search(&introspector, "制符").hits.is_empty());
    let thai = note(&introspector, "ผู้ใช้ชอบแท็บ");
    assert_eq!(search(&introspector, "ชอบ").hits[0].path, thai);
    let recall = introspector.recall("制表符", 3).unwrap();
    assert_eq!(recall.hits, 1, "{recall:#?}");
}

#[test]
fn an_empty_result_says_whether_the_index_is_fresh() {
    let home = Home::new();
    home.consolidated();
    let introspector = home.introspector();
    let result = search(&introspector, "zebra");
    assert!(result.hits.is_empty());
    assert_eq!(result.index, MemoryIndexState::Fresh);
    let recall = introspector.recall("zebra crossings", 3).unwrap();
    assert_eq!(recall.index, MemoryIndexState::Fresh);
    assert!(
        recall
            .note
            .unwrap()
            .contains("index fresh, 4 files searched")
    );
}

/// Issue 34: consolidation keeps one lesson in the handbook (tagged `[Task 1]`), the raw
/// memories and the session summary; search showed it three times. It is one hit naming the
/// other two places, and the page is filled with other hits after it.
#[test]
fn a_sentence_kept_in_three_files_is_one_hit_naming_the_others() {
    let home = Home::new();
    let lesson = "`cargo test -q` failed with E0583; it passed after adding `mod empty_table;`.";
    home.write(
        "MEMORY.md",
        format!("# Task Group: tides\n\n## Failures\n- {lesson} [Task 1]\n"),
    );
    home.write(
        "raw_memories.md",
        format!("# Raw Memories\n\n## Thread `t-1`\n\n- {lesson}\n"),
    );
    home.write(
        "rollout_summaries/2026-03-14-tides.md",
        format!("# Empty tide table\n\nKey steps:\n- {lesson}\n"),
    );
    home.write(
        "notes/2026-03-14-e0583.md",
        "# Note\n\nE0583 also shows when a test file is misnamed.\n",
    );
    let result = home
        .introspector()
        .search(&MemorySearchRequest {
            query: "E0583".to_owned(),
            max_results: Some(2),
            ..MemorySearchRequest::default()
        })
        .unwrap();
    assert_eq!(result.hits.len(), 2, "{result:?}");
    let merged = result
        .hits
        .iter()
        .find(|hit| hit.snippet.contains("mod empty_table"))
        .unwrap();
    let mut places = merged.also_in.clone();
    places.push(format!("{}:{}", merged.path, merged.line));
    places.sort();
    assert_eq!(
        places,
        [
            "MEMORY.md:4",
            "raw_memories.md:5",
            "rollout_summaries/2026-03-14-tides.md:4"
        ]
    );
    assert!(
        result
            .hits
            .iter()
            .any(|hit| hit.path == "notes/2026-03-14-e0583.md")
    );
    assert!(!result.truncated, "{result:?}");
}
