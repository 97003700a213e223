mod compaction;
mod goal;
mod rollout;
mod roundtrip;
mod strict;
mod wire;
