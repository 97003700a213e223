mod goal;
mod compaction;
mod rollout;
mod roundtrip;
mod strict;
mod wire;
