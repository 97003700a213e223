//! A user's hand edit of `MEMORY.md` or `memory_summary.md` is kept by the next
//! consolidation: detected against what the write path last wrote, and folded in as the
//! user's correction (a note in `notes/`), never silently written over.

use std::sync::{Arc, Mutex};

use memory_protocol::consolidation::ConsolidationInput;
use memory_protocol::names::memory_root as names;

use super::phase_two::{FakeModel, Home, answer, eager};

/// A model that records what it was given and answers with the same files every time, as a
/// careless one would: it never keeps a hand edit by itself.
fn careless(seen: Arc<Mutex<Vec<ConsolidationInput>>>) -> FakeModel {
    FakeModel::new(move |input| {
        seen.lock().unwrap().push(input.clone());
        answer(
            "# Task Group: repo\nscope: work in /work/repo\n\n## Task 1: build\nthread_id: `t1`\n- the build uses make\n",
            "## User preferences\n- short answers",
            &[],
        )
    })
}

fn hand_edit_notes(input: &ConsolidationInput) -> Vec<&str> {
    input
        .notes
        .iter()
        .filter(|note| note.text.contains("by editing"))
        .map(|note| note.text.as_str())
        .collect()
}

#[tokio::test]
async fn a_hand_edit_reaches_every_later_consolidation_as_the_users_correction() {
    let home = Home::new();
    home.output("t1", "the build uses make");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = careless(Arc::clone(&seen));
    home.run(&model, &eager()).await.unwrap();
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|input| hand_edit_notes(input).is_empty())
    );

    let edited = home
        .read(names::MEMORY_FILE)
        .unwrap()
        .replace("- the build uses make", "- the build uses just, not make")
        + "- Always use pnpm, never npm\n";
    std::fs::write(home.root.file(names::MEMORY_FILE), &edited).unwrap();
    let summary = home
        .read(names::MEMORY_SUMMARY_FILE)
        .unwrap()
        .replace("short", "detailed");
    std::fs::write(home.root.file(names::MEMORY_SUMMARY_FILE), &summary).unwrap();

    // The edit alone (a new note) is new input: the pass calls the model.
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.model_calls, 1, "{report:?}");
    let inputs = seen.lock().unwrap().clone();
    let last = inputs.last().unwrap();
    let notes = hand_edit_notes(last);
    assert_eq!(notes.len(), 2, "{:?}", last.notes);
    let memory_note = notes
        .iter()
        .find(|text| text.contains("of MEMORY.md"))
        .unwrap();
    assert!(
        memory_note.contains("Keep these corrections"),
        "{memory_note}"
    );
    assert!(
        memory_note.contains(
            "Lines the user added or changed:\n> - the build uses just, not make\n> - Always use pnpm, never npm\n"
        ),
        "{memory_note}"
    );
    assert!(
        memory_note.contains("Lines the user removed:\n> - the build uses make\n"),
        "{memory_note}"
    );
    let summary_note = notes
        .iter()
        .find(|text| text.contains("of memory_summary.md"))
        .unwrap();
    assert!(
        summary_note.contains("> - detailed answers"),
        "{summary_note}"
    );

    // The careless model wrote its old text again; the correction stays in notes/ and
    // reaches the next pass too, and no second note is made of the same edit.
    let folded = std::fs::read_dir(home.root.dir().join(names::NOTES_DIR))
        .unwrap()
        .count();
    assert_eq!(folded, 2);
    home.output("t2", "the docs live in /docs");
    home.run(&model, &eager()).await.unwrap();
    let inputs = seen.lock().unwrap().clone();
    assert_eq!(hand_edit_notes(inputs.last().unwrap()).len(), 2);
    let after = std::fs::read_dir(home.root.dir().join(names::NOTES_DIR))
        .unwrap()
        .count();
    assert_eq!(after, 2);
}

#[tokio::test]
async fn files_the_write_path_wrote_are_not_hand_edits() {
    let home = Home::new();
    home.output("t1", "the build uses make");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let model = careless(Arc::clone(&seen));
    home.run(&model, &eager()).await.unwrap();
    home.output("t2", "the docs live in /docs");
    home.run(&model, &eager()).await.unwrap();
    assert_eq!(model.calls(), 2);
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .all(|input| hand_edit_notes(input).is_empty())
    );
    assert!(!home.root.dir().join(names::NOTES_DIR).exists());
}
