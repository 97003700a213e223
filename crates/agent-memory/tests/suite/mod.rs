mod compaction;
