mod compaction;
mod upgrade;
