mod rollout;
mod roundtrip;
mod wire;
