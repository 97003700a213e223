//! The agent loop, one library call per step.
//!
//! A session, as [`Host::run_session`] runs it:
//!
//! 1. **Start.** The project's memory (`memory_introspect::Introspector` over the project's
//!    own agent-memory home) renders the memory block for the working directory; the pinned
//!    instruction file (`AGENTS.md`) is read; the user's goal is set in
//!    `goal_steering::GoalStore`; the rollout file is created with its `session_meta` line.
//! 2. **Each turn.** The user's message gets this turn's recall fence in front
//!    (`Introspector::recall`), or, on a goal continuation turn, the hidden continuation
//!    `GoalStore::steering_for` hands out is sent instead. Then, step by step: reduce the
//!    context when the conversation crosses its threshold
//!    (`memory_compaction::compaction::should_compact`); build the request (pinned preamble
//!    plus the conversation); check the seam invariants on it; send it; run the tool calls. At
//!    the end of the turn its tokens and time are charged to the goal (`GoalStore::record_turn`).
//!    A citation block in the final answer is recorded as a use of each cited memory
//!    (`memory_write::citations::record_citations`).
//!
//!    How the context is reduced is [`HostOptions::context`] ([`ContextStrategy`]):
//!    - **compaction** (the default): `memory_compaction::compaction::compact` with the offline
//!      summarizer replaces the older messages with a summary; the request is the pinned
//!      preamble plus the session's live view (the summary and the kept messages);
//!    - **working memory**: every message is also appended to a `working_memory` session
//!      (one folder per session under `working-memory/` in the host's home), and the older
//!      messages are committed into it (`working_memory::session::Session::commit`, the
//!      offline engine as the working-memory writer), which archives them and brings the
//!      seven-section working memory up to date; the request is the pinned preamble, then the
//!      working memory and the kept messages as `Session::assemble` lays them out within the
//!      conversation's share of the window.
//! 3. **After a compaction or a commit.** The goal is restated (`SteeringEvent::Compacted`) as
//!    a hidden message, and the memory block is rendered again; the pinned files are in every
//!    system prompt anyway.
//! 4. **End.** The rollout is read back as the write path reads it, and the write pipeline
//!    (`memory_write::runner::Runner` with the offline engine) turns the session into memories,
//!    so the next session in that project recalls it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use goal_steering::{GoalConfig, GoalStore, NewGoal, SteeringEvent, TurnTokens, TurnUsage};
use memory_compaction::compaction::{
    CompactionOptions, CompactionOutcome, CompactionReason, CompactionSettings, ContextSize,
    Session, compact, should_compact,
};
use memory_introspect::{
    BlockOptions, HostEnvironment, IntrospectConfig, Introspector, RenderedBlock,
};
use memory_offline::OfflineEngine;
use memory_protocol::ModelClient;
use memory_protocol::compaction::{
    AssistantBlock, CompactionDetails, ConversationEntry, ConversationMessage,
};
use memory_protocol::goal::{GoalTurnTrigger, ThreadGoalStatus};
use memory_protocol::introspect::MemoryScope;
use memory_protocol::{RolloutItem, TokenUsage};
use memory_sanitize::{TokenCounter, display_safe, escape_xml_text, o200k, redact_secrets};
use memory_write::citations::record_citations;
use memory_write::config::MemoriesConfig;
use memory_write::memory_root::MemoryRoot;
use memory_write::runner::{RolloutFolder, RunLimits, RunModels, RunOptions, Runner};
use memory_write::store::SharedStore;
use memory_write::store_selection::{StoreSelection, open_store};
use serde::{Deserialize, Serialize};
use working_memory::session::{
    Assembly, CommitPreview, CommitStatus, LeftOut, Session as WorkingSession, SessionMessage,
    SessionOptions, split_point,
};

use crate::context::{
    Preamble, build_request, build_working_request, conversation_tokens, host_tools,
    messages_tokens, request_text, request_tokens,
};
use crate::error::{HostError, Result};
use crate::model::{HostModel, HostRequest, ModelReply};
use crate::rollout::RolloutWriter;
use crate::script::{GoalAction, Script, SessionScript, TurnScript};
use crate::seams::{Seam, Violation, lost_modified_files, unpaired_calls};
use crate::tools::ToolBox;

/// Most model requests in one turn: a model that never stops calling tools ends its turn here.
pub const MAX_STEPS_PER_TURN: usize = 64;
/// Most passages recalled into one user message.
pub const RECALL_HITS: usize = 3;
/// The pinned instruction file a project may hold.
pub const PINNED_FILE: &str = "AGENTS.md";
/// The folder under the host's home that holds the working-memory sessions, one folder per
/// session named by its thread id (working-memory mode only).
pub const WORKING_MEMORY_DIR: &str = "working-memory";

/// What the host does when the conversation crosses its compaction threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContextStrategy {
    /// Compact: a summary of the older messages replaces them (`memory_compaction`).
    #[default]
    Compaction,
    /// Commit the older messages into the session's working memory (`working_memory`): they
    /// are archived, the seven-section document is updated from them, and requests carry the
    /// document instead of the messages.
    WorkingMemory,
}

impl ContextStrategy {
    /// The name the command line and scripts use: `compaction` or `working-memory`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContextStrategy::Compaction => "compaction",
            ContextStrategy::WorkingMemory => "working-memory",
        }
    }
}

impl FromStr for ContextStrategy {
    type Err = String;

    fn from_str(name: &str) -> std::result::Result<ContextStrategy, String> {
        [ContextStrategy::Compaction, ContextStrategy::WorkingMemory]
            .into_iter()
            .find(|strategy| strategy.as_str() == name)
            .ok_or_else(|| format!("{name:?} is not `compaction` or `working-memory`"))
    }
}

/// How a host run is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct HostOptions {
    /// Where everything lives: `work/<project>` is a project's working directory,
    /// `memory/<project>` its agent-memory home (state, memory root, rollouts).
    pub home: PathBuf,
    /// The model's context window.
    pub window_tokens: u64,
    /// Compaction settings (the conversation's share of the window is what the preamble
    /// leaves). In working-memory mode they set the same trigger, and `keep_recent_tokens`
    /// how many recent messages a commit keeps live.
    pub compaction: CompactionSettings,
    /// What happens at the threshold: a compaction or a working-memory commit.
    pub context: ContextStrategy,
}

impl HostOptions {
    /// The options a script asks for, under `home`.
    pub fn for_script(script: &Script, home: &Path) -> HostOptions {
        HostOptions {
            home: home.to_owned(),
            window_tokens: script.window_tokens,
            compaction: CompactionSettings {
                keep_recent_tokens: script.keep_recent_tokens,
                threshold_percent: script.threshold_percent,
                ..CompactionSettings::default()
            },
            context: script.context.unwrap_or_default(),
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostReport {
    /// Requests sent to the conversation model.
    pub requests: u64,
    /// Context reductions applied to the conversation: compactions in compaction mode; in
    /// working-memory mode, working-memory commits that finished (archived messages and
    /// updated the working memory). The `compactions=N` of [`HostReport::line`].
    pub compactions: u64,
    /// Compactions the library refused because their summary would not have made the
    /// context smaller; in working-memory mode, commits the host did not make because the
    /// messages they would archive weigh too little against the working memory.
    pub compactions_not_applied: u64,
    /// Working-memory commits whose update failed, with the error: the messages stayed live
    /// and the next commit retried them.
    pub commits_failed: Vec<String>,
    /// The status the last session with a goal left its goal in.
    pub goal: Option<ThreadGoalStatus>,
    /// Memory uses recorded from citation blocks in the model's final answers.
    pub citations_recorded: usize,
    /// Stage-one memories the write pipeline extracted, over every session.
    pub memories: usize,
    /// Every broken invariant.
    pub violations: Vec<Violation>,
    /// User goal actions the goal store refused (an illegal transition, say).
    pub refused_actions: Vec<String>,
    /// The first request sent after the run's third compaction (or working-memory commit)
    /// while a goal was active, as sent.
    pub after_third_compaction: Option<HostRequest>,
    /// The rollout files written, one per session.
    pub rollouts: Vec<PathBuf>,
}

impl HostReport {
    /// Violations of one seam.
    pub fn count(&self, seam: Seam) -> usize {
        self.violations.iter().filter(|v| v.seam == seam).count()
    }

    /// The one summary line: `HOST requests=N compactions=N goal=STATUS memories=N
    /// violations=N`.
    pub fn line(&self) -> String {
        let goal = self
            .goal
            .map_or_else(|| "none".to_owned(), |status| format!("{status:?}"))
            .to_lowercase();
        format!(
            "HOST requests={} compactions={} goal={goal} memories={} violations={}",
            self.requests,
            self.compactions,
            self.memories,
            self.violations.len()
        )
    }
}

/// The reference host: a conversation model, an offline summarizer and write-path engine, and
/// the report of what happened.
pub struct Host<M: HostModel> {
    options: HostOptions,
    model: M,
    engine: Arc<dyn ModelClient>,
    counter: &'static dyn TokenCounter,
    report: HostReport,
    /// Every project's private facts, to check that no other project's request holds them.
    private_facts: BTreeMap<String, Vec<String>>,
}

/// The working-memory side of a running session.
struct Working {
    /// The session folder: the live messages, and one archive per commit holding the
    /// messages it archived and the working memory as that commit left it.
    session: WorkingSession,
    /// The conversation's tokens right after the latest commit: the trigger re-arms from
    /// there, as it does from a compaction's `tokens_after`.
    tokens_after_commit: Option<u64>,
}

/// One running session's state.
struct Live<'a> {
    index: usize,
    thread_id: String,
    project: String,
    cwd: PathBuf,
    memory: Introspector,
    store: SharedStore,
    goals: GoalStore,
    rollout: RolloutWriter,
    /// The conversation as `memory_compaction` keeps it. In working-memory mode it is never
    /// compacted: it is the session's whole transcript, which numbers the messages, and the
    /// requests come from `working`.
    session: Session,
    /// The working-memory session, in working-memory mode.
    working: Option<Working>,
    preamble: Preamble,
    tools: Vec<memory_protocol::tools::ToolDefinition>,
    compacted: bool,
    last_details: Option<CompactionDetails>,
    expect_recalled: &'a [String],
    recalled: Vec<bool>,
}

impl<M: HostModel> Host<M> {
    /// A host over `options.home` talking to `model`. The offline engine summarizes
    /// compactions and runs the write path: no network is needed.
    pub fn new(options: HostOptions, model: M) -> Host<M> {
        Host {
            options,
            model,
            engine: Arc::new(OfflineEngine::new()),
            counter: o200k(),
            report: HostReport::default(),
            private_facts: BTreeMap::new(),
        }
    }

    /// Runs every session of `script`, in order, and returns the report.
    pub async fn run_script(mut self, script: &Script) -> Result<HostReport> {
        self.private_facts = script
            .projects
            .iter()
            .map(|(name, project)| (name.clone(), project.private_facts.clone()))
            .collect();
        for (name, project) in &script.projects {
            let cwd = self.project_cwd(name);
            for (path, text) in &project.files {
                let file = cwd.join(path);
                if let Some(dir) = file.parent() {
                    std::fs::create_dir_all(dir).map_err(|error| HostError::Io {
                        path: dir.to_owned(),
                        error,
                    })?;
                }
                std::fs::write(&file, text).map_err(|error| HostError::Io { path: file, error })?;
            }
            std::fs::create_dir_all(&cwd).map_err(|error| HostError::Io { path: cwd, error })?;
        }
        for (index, session) in script.sessions.iter().enumerate() {
            self.run_session(index + 1, session).await?;
        }
        Ok(self.report)
    }

    fn project_cwd(&self, project: &str) -> PathBuf {
        self.options.home.join("work").join(project)
    }

    /// The project's own agent-memory home: its memory never reaches another project.
    fn project_home(&self, project: &str) -> PathBuf {
        self.options.home.join("memory").join(project)
    }

    /// Runs one session (see the module docs).
    pub async fn run_session(&mut self, index: usize, script: &SessionScript) -> Result<()> {
        let project = script.project.clone();
        let cwd = self.project_cwd(&project);
        let home = self.project_home(&project);
        // The thread id is derived from the session's position so a run is reproducible.
        let thread_id = format!("00000000-0000-4000-8000-{index:012}");
        let rollout_path = home
            .join("sessions")
            .join(format!("rollout-{index:04}-{thread_id}.jsonl"));
        let rollout = RolloutWriter::create(&rollout_path, &thread_id, &cwd)?;
        self.report.rollouts.push(rollout_path);

        // One home per project, scoped to it: the block and recall read only this project's
        // memory root, which is what keeps one project's memory out of another's requests.
        let memory = Introspector::open(
            &home,
            IntrospectConfig {
                scope: MemoryScope::Project,
                ..IntrospectConfig::default()
            },
        )?;
        // The write path's store: citations in final answers are recorded there as uses.
        let store = open_store(&home, &StoreSelection::default()).await?;
        let mut goals = GoalStore::open_home(&home, GoalConfig::default())?;
        if let Some(goal) = &script.goal {
            goals.set_goal(
                &thread_id,
                &NewGoal {
                    objective: goal.objective.clone(),
                    token_budget: goal.token_budget,
                    replace: true,
                    expected_goal_id: None,
                },
            )?;
        }
        let pinned = match std::fs::read_to_string(cwd.join(PINNED_FILE)) {
            Ok(text) => vec![(PINNED_FILE.to_owned(), text)],
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => {
                return Err(HostError::Io {
                    path: cwd.join(PINNED_FILE),
                    error,
                });
            }
        };
        let tools = host_tools(memory.tool_definitions());
        let working = match self.options.context {
            ContextStrategy::Compaction => None,
            // `open` reads the folder (none yet: the rollout above was new, so is the thread)
            // and writes nothing; the first append creates it. The token budget only sets
            // when the library would call a commit due, which the host decides itself.
            ContextStrategy::WorkingMemory => Some(Working {
                session: WorkingSession::open(
                    self.options.home.join(WORKING_MEMORY_DIR).join(&thread_id),
                    SessionOptions {
                        token_budget: self.options.window_tokens,
                        ..SessionOptions::default()
                    },
                )?,
                tokens_after_commit: None,
            }),
        };
        let mut live = Live {
            index,
            thread_id,
            project,
            cwd,
            memory,
            store,
            goals,
            rollout,
            session: Session::new(Vec::new())?,
            working,
            preamble: Preamble {
                pinned,
                memory_block: String::new(),
            },
            tools,
            compacted: false,
            last_details: None,
            expect_recalled: &script.expect_recalled,
            recalled: vec![false; script.expect_recalled.len()],
        };
        live.preamble.memory_block = render_block(&live)?.text;

        for turn in &script.turns {
            self.run_turn(&mut live, turn).await?;
        }

        for (fact, recalled) in live.expect_recalled.iter().zip(&live.recalled) {
            if !recalled {
                self.violate(
                    &live,
                    Seam::Recall,
                    None,
                    format!("{fact:?} was never recalled"),
                );
            }
        }
        if let Some(goal) = live.goals.get(&live.thread_id)? {
            self.report.goal = Some(goal.status);
        }
        self.check_rollout(&live)?;
        self.remember(&live).await
    }

    async fn run_turn(&mut self, live: &mut Live<'_>, turn: &TurnScript) -> Result<()> {
        let started = Instant::now();
        if let Some(action) = &turn.goal_action {
            self.goal_action(live, action)?;
        }
        if turn.compact {
            self.reduce_context(live, CompactionReason::Manual).await?;
        }
        live.rollout.turn_context(&live.cwd, &self.model.name())?;
        let continuation = if turn.continue_goal {
            live.goals
                .steering_for(&live.thread_id, SteeringEvent::Idle)?
        } else {
            None
        };
        let trigger = if continuation.is_some() {
            GoalTurnTrigger::Continuation
        } else {
            GoalTurnTrigger::User
        };
        let message = match (continuation, &turn.user) {
            (Some(steering), _) => steering.text,
            (None, Some(user)) => {
                // Recall for this turn goes in front of the user's words, fenced.
                let recall = live.memory.recall(user, RECALL_HITS)?;
                if recall.text.is_empty() {
                    user.clone()
                } else {
                    format!("{}\n\n{user}", recall.text)
                }
            }
            (None, None) => "Continue.".to_owned(),
        };
        push_message(live, ConversationMessage::User { text: message })?;

        let mut usage = TokenUsage::default();
        let mut tool_calls = 0i64;
        for _ in 0..MAX_STEPS_PER_TURN {
            if self.due(live)? {
                self.reduce_context(live, CompactionReason::Threshold)
                    .await?;
            }
            let request = self.request(live)?;
            let input_tokens = self.check_request(live, &request);
            let reply = self.model.respond(&request).await?;
            usage.input_tokens += input_tokens;
            usage.output_tokens += reply.output_tokens.unwrap_or(0);
            let calls = reply.tool_calls.clone();
            let text = reply.text.clone();
            record_reply(live, reply)?;
            if calls.is_empty() {
                // The final answer's citation block counts as a use of each cited memory,
                // which ranks it higher in the next consolidation.
                let root = MemoryRoot::under_home(&self.project_home(&live.project));
                let usage = record_citations(live.store.as_ref(), &root, &text).await?;
                self.report.citations_recorded += usage.recorded;
                break;
            }
            for call in &calls {
                let answer = ToolBox {
                    cwd: &live.cwd,
                    memory: &live.memory,
                    goals: &mut live.goals,
                    thread_id: &live.thread_id,
                }
                .run(call);
                if !answer.goal_tool {
                    tool_calls += 1;
                }
                live.rollout
                    .function_output(&call.call_id, &answer.output)?;
                push_message(
                    live,
                    ConversationMessage::ToolResult {
                        tool_call_id: call.call_id.clone(),
                        tool_name: call.name.clone(),
                        text: answer.output,
                        is_error: false,
                        useless: false,
                    },
                )?;
            }
        }

        // Goal accounting: the turn's tokens and time, charged once per turn id.
        if live.goals.get(&live.thread_id)?.is_some() {
            let turn_id = format!("{}-turn-{}", live.thread_id, live.session.entries().len());
            live.goals.record_turn(
                &live.thread_id,
                None,
                &TurnUsage {
                    turn_id,
                    trigger,
                    plan_mode: false,
                    tokens: TurnTokens::Breakdown {
                        input: i64::try_from(usage.input_tokens).unwrap_or(i64::MAX),
                        cached_input: 0,
                        output: i64::try_from(usage.output_tokens).unwrap_or(i64::MAX),
                    },
                    seconds: i64::try_from(started.elapsed().as_secs()).unwrap_or(i64::MAX),
                    tool_calls,
                    error: None,
                },
            )?;
        }
        Ok(())
    }

    /// A user action on the goal. A refused action (pausing a paused goal, say) is the user's
    /// to see; the session goes on.
    fn goal_action(&mut self, live: &mut Live<'_>, action: &GoalAction) -> Result<()> {
        let thread = live.thread_id.clone();
        let done = match action {
            GoalAction::Pause => live.goals.pause(&thread, None),
            GoalAction::Resume => live.goals.resume(&thread, None),
            GoalAction::Edit(objective) => live.goals.edit_objective(&thread, None, objective),
        };
        match done {
            Ok(_) => {}
            Err(error) => {
                self.report
                    .refused_actions
                    .push(format!("{action:?}: {error}"));
                return Ok(());
            }
        }
        if matches!(action, GoalAction::Edit(_) | GoalAction::Resume) {
            // The model learns of the new objective (or that the goal runs again, with its
            // objective and budget) now, not at the next idle continuation: a compaction while
            // the goal was paused restated nothing.
            if let Some(steering) = live.goals.steering_for(&thread, SteeringEvent::Idle)? {
                push_message(
                    live,
                    ConversationMessage::User {
                        text: steering.text,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// The conversation's share of the window: what the pinned preamble and the tool
    /// definitions leave.
    fn conversation_window(&self, live: &Live<'_>) -> u64 {
        let empty = HostRequest {
            system: live.preamble.system(),
            messages: Vec::new(),
            tools: live.tools.clone(),
        };
        self.options
            .window_tokens
            .saturating_sub(request_tokens(&empty, self.counter))
    }

    /// The request for the conversation as it is now. In working-memory mode,
    /// `Session::assemble` lays out the working memory (inside its rules: a lossy summary,
    /// newer messages win) and the messages within the conversation's share of the window,
    /// keeping the newest message and the newest user message, and a tool call with its
    /// results, always together.
    fn request(&self, live: &Live<'_>) -> Result<HostRequest> {
        Ok(match &live.working {
            None => build_request(&live.preamble, &live.session, &live.tools),
            Some(working) => {
                let assembly = self.assemble(working, self.conversation_window(live))?;
                build_working_request(&live.preamble, &assembly, &live.tools)
            }
        })
    }

    /// The working memory and the messages within `window` tokens as the host counts them.
    /// `Session::assemble` spends its budget in its own estimate (and keeps a reply reserve),
    /// which can undercount the host's tokenizer on some texts (long runs of digits, say):
    /// while the assembly is larger than `window`, it is redone with the budget scaled down by
    /// the overshoot and a sixteenth more (messages are dropped whole, so a bare scaling can
    /// land on the same assembly), eight times at most; a request still too large is the
    /// fits-window seam's to report.
    fn assemble(&self, working: &Working, window: u64) -> Result<Assembly> {
        let mut budget = window;
        let mut assembly = working.session.assemble(budget)?;
        for _ in 0..8 {
            let tokens = conversation_tokens(&assembly, self.counter);
            if tokens <= window || budget == 0 {
                break;
            }
            let scaled = u128::from(budget) * u128::from(window) / u128::from(tokens);
            budget = u64::try_from(scaled)
                .unwrap_or(budget)
                .saturating_sub(budget / 16 + 1);
            assembly = working.session.assemble(budget)?;
        }
        Ok(assembly)
    }

    /// True when the conversation crossed its threshold: `should_compact` over the session's
    /// live view (compaction), or over the working memory and the live messages as assembled
    /// (working memory), which is also due whenever the assembly had to leave a message out.
    fn due(&self, live: &Live<'_>) -> Result<bool> {
        let window = self.conversation_window(live);
        let size = match &live.working {
            None => live.session.context_size(self.counter),
            Some(working) => {
                let assembly = self.assemble(working, window)?;
                if !assembly.left_out.messages.is_empty() {
                    return Ok(true);
                }
                ContextSize {
                    provider_tokens: None,
                    estimated_tokens: conversation_tokens(&assembly, self.counter),
                    tokens_after_last_compaction: working.tokens_after_commit,
                }
            }
        };
        Ok(should_compact(window, &size, &self.options.compaction))
    }

    /// Reduces the context the way the options say: a compaction or a working-memory commit.
    async fn reduce_context(
        &mut self,
        live: &mut Live<'_>,
        reason: CompactionReason,
    ) -> Result<()> {
        match self.options.context {
            ContextStrategy::Compaction => self.compact(live, reason).await,
            ContextStrategy::WorkingMemory => self.commit_working_memory(live).await,
        }
    }

    /// Commits the older messages into the working memory. `Session::commit` archives every
    /// live message but the newest `keep` (moving the cut earlier rather than separate a tool
    /// call from its result), sends the archived messages the working memory has not seen to
    /// the writer model, merges its section operations through the guards (no file path,
    /// error or open issue is lost), and reports `Done` only once the archive is marked done;
    /// a failed update archives nothing, so the messages stay live for the next commit. Then,
    /// as after a compaction, the goal is restated and the memory block rendered again, and
    /// the rollout gets a `compacted` line holding the working memory.
    async fn commit_working_memory(&mut self, live: &mut Live<'_>) -> Result<()> {
        let window = self.conversation_window(live);
        let Some(working) = live.working.as_mut() else {
            return Ok(());
        };
        let assembly = self.assemble(working, window)?;
        let keep = keep_recent_count(
            working.session.messages(),
            self.options.compaction.keep_recent_tokens,
        );
        let entries: Vec<ConversationEntry> = working
            .session
            .messages()
            .iter()
            .map(|message| message.entry.clone())
            .collect();
        // The context a commit reduces is the whole live conversation beside what the request
        // carries, not the assembly: when the conversation outgrew the window the assembly
        // already leaves its oldest messages out (one reason a commit is due), and after the
        // commit it may send more than that trimmed view (every kept message, nothing left
        // out) while sending less than the conversation the commit replaced.
        let whole = Assembly {
            messages: entries.clone(),
            left_out: LeftOut::default(),
            ..assembly.clone()
        };
        let before = conversation_tokens(&whole, self.counter);
        let archived = &entries[..split_point(&entries, keep as usize)];
        if archived.is_empty() {
            // Nothing older than the kept messages (or only a call whose result is kept).
            return Ok(());
        }
        // A commit cannot be undone, so the host makes it only when it makes the context
        // smaller, as `compact` refuses a summary that would not. Before asking the writer
        // model, the messages to archive must outweigh twice the working memory the request
        // carries in their place (its rules and document now, or the rules alone before the
        // first commit), since the document grows by what it learns from them; once the new
        // document is known, the commit goes ahead only if the request it leaves (its rules
        // and document, then the kept messages) is smaller than the whole conversation now.
        let archived_tokens = messages_tokens(archived, self.counter);
        let carried = match &assembly.instructions {
            Some(instructions) => instructions.clone(),
            None => working_memory_instructions("")?,
        };
        let carried_tokens = u64::try_from(self.counter.count(&carried)).unwrap_or(u64::MAX);
        if archived_tokens <= carried_tokens.saturating_mul(2) {
            self.report.compactions_not_applied += 1;
            return Ok(());
        }
        let counter = self.counter;
        let smaller = |preview: &CommitPreview<'_>| {
            // A document the rules cannot be rendered with is declined: nothing is written.
            working_memory_instructions(preview.overview).is_ok_and(|instructions| {
                let left = Assembly {
                    instructions: Some(instructions),
                    messages: preview.kept.to_vec(),
                    left_out: LeftOut::default(),
                    ..assembly.clone()
                };
                conversation_tokens(&left, counter) < before
            })
        };
        let commit = working
            .session
            .commit_accepting(self.engine.as_ref(), keep, &smaller)
            .await?;
        match commit.status {
            CommitStatus::Done => {}
            CommitStatus::Skipped if commit.reason.as_deref() == Some("declined") => {
                self.report.compactions_not_applied += 1;
                return Ok(());
            }
            // Nothing older than the kept messages (or only a call whose result is kept).
            CommitStatus::Skipped => return Ok(()),
            CommitStatus::Failed => {
                self.report
                    .commits_failed
                    .push(commit.error.unwrap_or_else(|| "unknown error".to_owned()));
                return Ok(());
            }
        }
        let after = conversation_tokens(&self.assemble(working, window)?, self.counter);
        working.tokens_after_commit = Some(after);
        let document = working
            .session
            .working_memory()?
            .map(|(_, document)| document)
            .unwrap_or_default();
        live.rollout.compacted(&document)?;
        if after >= before {
            self.violate(
                live,
                Seam::CompactionShrinks,
                None,
                format!(
                    "the working-memory commit took the context from {before} to {after} tokens"
                ),
            );
        }
        live.compacted = true;
        self.report.compactions += 1;
        self.reinject(live)
    }

    /// Compacts the conversation. A new entry is appended to the session and, as a `compacted`
    /// line, to the rollout; then the goal is restated and the memory block rendered again.
    async fn compact(&mut self, live: &mut Live<'_>, reason: CompactionReason) -> Result<()> {
        let options = CompactionOptions {
            settings: self.options.compaction.clone(),
            window_tokens: self.conversation_window(live),
            reason,
            ..CompactionOptions::default()
        };
        // `compact` returns an entry only when it makes the context smaller: a summary as
        // large as what it replaces (a small context compacted on request) is refused, and
        // the conversation goes on uncompacted.
        let entry =
            match compact(&live.session, self.engine.as_ref(), &options, self.counter).await? {
                CompactionOutcome::Compacted(compaction) => compaction.entry,
                CompactionOutcome::WouldNotShrink(_) => {
                    self.report.compactions_not_applied += 1;
                    return Ok(());
                }
                CompactionOutcome::NothingToSummarize(_) => return Ok(()),
            };
        if let Some(previous) = &live.last_details {
            let lost = lost_modified_files(previous, &entry.details);
            if !lost.is_empty() {
                self.violate(
                    live,
                    Seam::ModifiedFilesGrow,
                    None,
                    format!("modified files lost: {lost:?}"),
                );
            }
        }
        let before = live.session.context_tokens(self.counter);
        live.last_details = Some(entry.details.clone());
        live.rollout.compacted(&entry.summary)?;
        live.session.push_compaction(entry)?;
        let after = live.session.context_tokens(self.counter);
        if after >= before {
            self.violate(
                live,
                Seam::CompactionShrinks,
                None,
                format!("the context went from {before} to {after} tokens"),
            );
        }
        live.compacted = true;
        self.report.compactions += 1;
        self.reinject(live)
    }

    /// What a compaction or a commit dropped from the conversation comes back: the goal as a
    /// hidden message (`SteeringEvent::Compacted` restates the objective and the remaining
    /// budget of an active goal, nothing otherwise), the memory block in the system prompt
    /// (pinned files are there already, in every request).
    fn reinject(&mut self, live: &mut Live<'_>) -> Result<()> {
        if let Some(steering) = live
            .goals
            .steering_for(&live.thread_id, SteeringEvent::Compacted)?
        {
            push_message(
                live,
                ConversationMessage::User {
                    text: steering.text,
                },
            )?;
        }
        live.preamble.memory_block = render_block(live)?.text;
        Ok(())
    }

    /// Checks the seam invariants on `request` before it is sent; returns its size.
    fn check_request(&mut self, live: &mut Live<'_>, request: &HostRequest) -> u64 {
        self.report.requests += 1;
        let number = self.report.requests;
        let goal_running = match live.goals.get(&live.thread_id) {
            Ok(Some(goal)) => goal.status == ThreadGoalStatus::Active,
            _ => false,
        };
        if self.report.compactions >= 3
            && goal_running
            && self.report.after_third_compaction.is_none()
        {
            self.report.after_third_compaction = Some(request.clone());
        }
        let tokens = request_tokens(request, self.counter);
        if tokens > self.options.window_tokens {
            self.violate(
                live,
                Seam::FitsWindow,
                Some(number),
                format!(
                    "{tokens} tokens for a {}-token window",
                    self.options.window_tokens
                ),
            );
        }
        for problem in unpaired_calls(request) {
            self.violate(live, Seam::ToolPairing, Some(number), problem);
        }
        let text = request_text(request);
        for (path, pinned) in &live.preamble.pinned {
            if !text.contains(pinned.trim_end()) {
                self.violate(
                    live,
                    Seam::PinnedInstructions,
                    Some(number),
                    format!("{path} is missing"),
                );
            }
        }
        if live.compacted
            && let Ok(Some(goal)) = live.goals.get(&live.thread_id)
            && goal.status == ThreadGoalStatus::Active
        {
            let objective =
                escape_xml_text(&display_safe(&redact_secrets(&goal.objective))).into_owned();
            let budget_shown = goal.token_budget.is_none() || text.contains("Tokens remaining:");
            if !text.contains(&objective) || !budget_shown {
                self.violate(
                    live,
                    Seam::GoalAfterCompaction,
                    Some(number),
                    "the active goal's objective or remaining budget is missing".to_owned(),
                );
            }
        }
        let foreign: Vec<String> = self
            .private_facts
            .iter()
            .filter(|(project, _)| **project != live.project)
            .flat_map(|(_, facts)| facts.iter())
            .filter(|fact| text.contains(fact.as_str()))
            .cloned()
            .collect();
        for fact in foreign {
            self.violate(
                live,
                Seam::ProjectIsolation,
                Some(number),
                format!("another project's fact {fact:?} is in the request"),
            );
        }
        for (fact, recalled) in live.expect_recalled.iter().zip(live.recalled.iter_mut()) {
            *recalled |= text.contains(fact.as_str());
        }
        tokens
    }

    /// Reads the rollout back as the write path does: no bad line, no unknown line type.
    fn check_rollout(&mut self, live: &Live<'_>) -> Result<()> {
        let read = memory_transcript::read_rollout_path(
            live.rollout.path(),
            &memory_transcript::ReaderOptions::default(),
        )?;
        for diagnostic in &read.diagnostics {
            self.violate(
                live,
                Seam::RolloutReadBack,
                None,
                format!("bad rollout line: {diagnostic:?}"),
            );
        }
        for line in &read.lines {
            if let RolloutItem::Other(other) = &line.item {
                self.violate(
                    live,
                    Seam::RolloutReadBack,
                    None,
                    format!("unknown rollout line type {:?}", other.item_type),
                );
            }
        }
        Ok(())
    }

    /// The write pipeline over the project's sessions: phase 1 extracts this session, phase 2
    /// consolidates the project's memory root, both with the offline engine.
    async fn remember(&mut self, live: &Live<'_>) -> Result<()> {
        let home = self.project_home(&live.project);
        let config = MemoriesConfig {
            // The session just ended; the host knows it is finished.
            min_rollout_idle_hours: 0,
            ..MemoriesConfig::default()
        };
        let sessions = home.join("sessions");
        let runner = Runner::prepare(&home, &StoreSelection::default(), &config, &sessions).await?;
        if !runner.scan().unreadable.is_empty() {
            self.violate(
                live,
                Seam::RolloutReadBack,
                None,
                format!(
                    "the write path could not read {:?}",
                    runner.scan().unreadable
                ),
            );
        }
        let models = RunModels {
            extract: Arc::clone(&self.engine),
            context_window: memory_protocol::ContextWindow {
                tokens: None,
                source: memory_protocol::ContextWindowSource::Default,
            },
            consolidate: Arc::clone(&self.engine),
        };
        let options = RunOptions {
            root: MemoryRoot::under_home(&home),
            limits: RunLimits::new(RolloutFolder::Given, None, None, &config),
            consolidation_wait: Duration::from_secs(30),
            retry_failed: false,
        };
        let report = runner.run(&models, &options, None).await?;
        self.report.memories += report.phase_one.succeeded;
        if let Some(error) = report.phase_two_error {
            return Err(error.into());
        }
        Ok(())
    }

    fn violate(&mut self, live: &Live<'_>, seam: Seam, request: Option<u64>, detail: String) {
        self.report.violations.push(Violation {
            seam,
            session: live.index,
            request,
            detail,
        });
    }
}

/// The memory block for the session's working directory, recorded as injected.
fn render_block(live: &Live<'_>) -> Result<RenderedBlock> {
    let block = live.memory.render_block(&BlockOptions {
        environment: Some(HostEnvironment {
            host: "reference-host".to_owned(),
            host_state_dir: live.memory.home().display().to_string(),
            project_root: live.cwd.display().to_string(),
            os: std::env::consts::OS.to_owned(),
            shell: Some("sh".to_owned()),
        }),
        ..BlockOptions::default()
    })?;
    live.memory.record_injection(&block.snapshot)?;
    Ok(block)
}

/// Appends a message to the session and the rollout (and, in working-memory mode, to the
/// working-memory session's live messages, under the same id: ids are never reused, which
/// the working memory's cursor relies on).
fn push_message(live: &mut Live<'_>, message: ConversationMessage) -> Result<()> {
    if let ConversationMessage::User { text } = &message {
        live.rollout.user_message(text)?;
    }
    let id = live.session.fresh_id("m");
    let entry = ConversationEntry { id, message };
    if let Some(working) = &mut live.working {
        working.session.append(vec![entry.clone()])?;
    }
    live.session.push_message(entry)?;
    Ok(())
}

/// The instructions a working memory comes with in the system prompt, around `document`
/// (around an empty one: the rules alone, what the first commit adds besides the document).
fn working_memory_instructions(document: &str) -> Result<String> {
    memory_prompts::working_memory::assemble(&memory_prompts::working_memory::AssembleContext {
        working_memory: memory_prompts::UntrustedText::new(document.to_owned()),
    })
    .map_err(|error| HostError::WorkingMemory(error.into()))
}

/// How many of the newest messages a working-memory commit keeps live: as many as fit in
/// `keep_tokens` (the library's estimate, as a compaction keeps `keep_recent_tokens`), and
/// at least the newest one.
fn keep_recent_count(messages: &[SessionMessage], keep_tokens: u64) -> u32 {
    let mut total = 0u64;
    let kept = messages
        .iter()
        .rev()
        .take_while(|message| {
            total = total.saturating_add(message.tokens);
            total <= keep_tokens
        })
        .count();
    u32::try_from(kept).unwrap_or(u32::MAX).max(1)
}

/// The model's reply as an assistant message (text, then tool calls) in both records.
fn record_reply(live: &mut Live<'_>, reply: ModelReply) -> Result<()> {
    let mut content = Vec::new();
    if !reply.text.is_empty() {
        live.rollout.assistant_message(&reply.text)?;
        content.push(AssistantBlock::Text { text: reply.text });
    }
    for call in reply.tool_calls {
        live.rollout
            .function_call(&call.call_id, &call.name, &call.arguments.to_string())?;
        content.push(AssistantBlock::ToolCall {
            id: call.call_id,
            name: call.name,
            arguments: call.arguments,
        });
    }
    push_message(live, ConversationMessage::Assistant { content })
}
