//! Forgetting and usage through phase 2 with a model that follows the prompt: a thread
//! removed from the selection disappears from `MEMORY.md`, other losses are still refused,
//! the prompt grows with the change (not the memory), and citations change what is selected.

use memory_protocol::consolidation::ConsolidationInput;
use memory_protocol::names::memory_root as names;
use memory_sanitize::{TokenCounter, o200k};
use memory_write::citations::record_citations;
use memory_write::prompt_budget;
use memory_write::store::{MemoryMode, WriteStore};

use super::conformance::window;
use super::phase_two::{FakeModel, Home, answer, eager};

/// A MEMORY.md with one task section per selected thread, in the handbook's index format.
fn handbook(input: &ConsolidationInput) -> String {
    let mut out = String::from("# Task Group: repo\nscope: work in /work/repo\n\n");
    for (index, record) in input.selected.iter().enumerate() {
        out.push_str(&format!(
            "## Task {}: {}\noutcome: success; thread_id: `{}`\n- {}\n\n",
            index + 1,
            record.thread_id,
            record.thread_id,
            record.raw_memory
        ));
    }
    out
}

/// What a model that follows the prompt does: drop the sections of removed threads, add the
/// added ones, keep everything else as it was.
fn following_model() -> FakeModel {
    FakeModel::new(|input| {
        let memory_md = if input.memory_md.trim().is_empty() {
            handbook(input)
        } else {
            let mut kept: Vec<&str> = Vec::new();
            for section in input.memory_md.split("\n## ") {
                let removed = input
                    .changes
                    .removed
                    .iter()
                    .any(|id| section.contains(&format!("thread_id: `{id}`")));
                if !removed {
                    kept.push(section);
                }
            }
            let mut out = kept.join("\n## ");
            for record in input
                .selected
                .iter()
                .filter(|r| input.changes.added.contains(&r.thread_id))
            {
                out.push_str(&format!(
                    "\n## Task: {}\nthread_id: `{}`\n- {}\n",
                    record.thread_id, record.thread_id, record.raw_memory
                ));
            }
            out
        };
        answer(&memory_md, "## What's in Memory\n- repo", &[])
    })
}

#[tokio::test]
async fn a_thread_removed_from_selection_disappears_from_memory_md() {
    let home = Home::new();
    home.output("t1", "edit src/old_module.rs through `make regen`");
    home.output("t2", "edit src/new_module.rs; run `make check` first");
    let model = following_model();
    home.run(&model, &eager()).await.unwrap();
    let first = home.read(names::MEMORY_FILE).unwrap();
    assert!(
        first.contains("src/old_module.rs") && first.contains("`t1`"),
        "{first}"
    );

    // The session used outside context: t1 leaves the selection.
    home.store
        .set_thread_memory_mode("t1", MemoryMode::Polluted, 0)
        .await
        .unwrap();
    home.sql()
        .execute(
            "UPDATE phase2_lease SET input_watermark = input_watermark + 1",
            [],
        )
        .unwrap();
    let report = home.run(&model, &eager()).await.unwrap();
    assert_eq!(report.changes.removed, ["t1"]);
    assert!(
        report.guard_missing.is_empty(),
        "{:?}",
        report.guard_missing
    );
    assert!(report.forgotten > 0);
    let second = home.read(names::MEMORY_FILE).unwrap();
    assert!(
        !second.contains("old_module") && !second.contains("`t1`"),
        "{second}"
    );
    assert!(second.contains("src/new_module.rs") && second.contains("`make check`"));
    // The model was told, and was not sent the unchanged thread's material again.
    let requests = model.requests.lock().unwrap();
    let prompt = &requests.last().unwrap().input;
    assert!(
        prompt.contains("Removed (forget what only these supported):\n- `t1`\n"),
        "{prompt}"
    );
    assert!(prompt.contains("Unchanged (already in the current files; keep them):\n- `t2` ("));
    assert!(
        prompt.contains("<raw-memory source=\"raw_memories.md\">\n\n</raw-memory>"),
        "no raw memory is sent again for an unchanged thread: {prompt}"
    );
}

#[tokio::test]
async fn losing_what_a_kept_thread_supports_is_still_refused() {
    let home = Home::new();
    home.output("t1", "edit src/old_module.rs");
    home.output("t2", "edit src/new_module.rs");
    home.run(&following_model(), &eager()).await.unwrap();
    home.store.forget_thread("t1", 0).await.unwrap();
    // A careless model drops everything but the title.
    let careless = FakeModel::new(|_| answer("# Task Group: repo\n", "v1", &[]));
    let report = home.run(&careless, &eager()).await.unwrap();
    assert_eq!(report.changes.removed, ["t1"]);
    assert_eq!(
        report.guard_missing,
        ["/work/repo", "src/new_module.rs", "t2", "thread_id"],
        "{report:?}"
    );
    let memory = home.read(names::MEMORY_FILE).unwrap();
    assert!(memory.contains("src/new_module.rs"), "kept: {memory}");
}

#[tokio::test]
async fn the_prompt_grows_with_the_change_not_with_the_memory() {
    let home = Home::new();
    let model = following_model();
    let budget = |model: &FakeModel| usize::try_from(prompt_budget(model.window)).unwrap();
    for batch in 0..4 {
        for index in 0..40 {
            let id = format!("t{batch}-{index:02}");
            home.output(
                &id,
                &format!("{id}: {}", "a fact worth keeping. ".repeat(60)),
            );
        }
        home.run(&model, &eager()).await.unwrap();
        let requests = model.requests.lock().unwrap();
        let prompt = &requests.last().unwrap().input;
        let tokens = o200k().count(prompt);
        assert!(
            tokens <= budget(&model),
            "{tokens} tokens over {}",
            budget(&model)
        );
    }
    // After the first pass each prompt carries the 40 new threads, not all 160.
    let raw_blocks = |prompt: &str| prompt.matches("## Thread `").count();
    {
        let requests = model.requests.lock().unwrap();
        assert_eq!(raw_blocks(&requests[0].input), 40);
        assert_eq!(raw_blocks(&requests[3].input), 40);
    }

    // A small window still gets a prompt within it, every part cut to its share.
    let mut small = following_model();
    small.window = Some(8_000);
    home.output("late", &"one more long fact. ".repeat(2_000));
    home.run(&small, &eager()).await.unwrap();
    let requests = small.requests.lock().unwrap();
    let tokens = o200k().count(&requests[0].input);
    assert!(
        tokens as u64 <= prompt_budget(Some(8_000)) + 200,
        "{tokens}"
    );
    assert!(
        requests[0].input.contains("chars omitted]"),
        "cut to its share"
    );
}

/// The one memory a selection of size one picks.
async fn pick(home: &Home) -> Vec<String> {
    home.store
        .select_phase_two_inputs(window(memory_write::store::now_unix(), 30), 1)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.thread_id)
        .collect()
}

#[tokio::test]
async fn a_cited_entry_rises_in_usage_and_changes_the_next_selection() {
    let home = Home::new();
    home.output("older", "the deploy script needs `--dry-run` on staging");
    home.output("newer", "the cache package must lock in Set");
    home.sql()
        .execute("UPDATE stage1_outputs SET source_updated_at = source_updated_at - 86400 WHERE thread_id = 'older'", [])
        .unwrap();
    assert_eq!(
        pick(&home).await,
        ["newer"],
        "the newer memory wins while nothing is used"
    );

    home.root.prepare().unwrap();
    home.root
        .write_memory(
            "# Task Group: repo\n\n## Task 1: deploy\noutcome: success; thread_id: `older`\n\n\
             ## Task 2: cache\noutcome: success; thread_id: `newer`\n",
        )
        .unwrap();
    let answer = "Run the deploy with `--dry-run` first.\n\n<memory-citation>\n<citation_entries>\n\
                  MEMORY.md:3-4|note=[the staging deploy rule]\n</citation_entries>\n\
                  <rollout_ids>\n</rollout_ids>\n</memory-citation>";
    let usage = record_citations(&home.store, &home.root, answer)
        .await
        .unwrap();
    assert_eq!(
        (usage.cited_threads.as_slice(), usage.recorded),
        (&["older".to_owned()][..], 1)
    );
    let record = home.store.stage_one_output("older").await.unwrap().unwrap();
    assert_eq!(record.usage_count, 1);
    assert!(record.last_used_at.is_some());
    assert_eq!(
        pick(&home).await,
        ["older"],
        "the cited memory now ranks first"
    );
}
