//! Differential check: merges many generated documents and operations and prints every
//! result (document and guard records), so two builds can be compared with `diff`.

use memory_protocol::working_memory::WorkingMemorySection;
use serde_json::{Map, Value, json};
use working_memory::{MergeOptions, SectionOps, merge_text};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "batch",
    "Batch",
    "the",
    "import",
    "tides/import/step_1.py",
    "step_2.py:",
    "src/lib.rs:88:14",
    "`pytest tests/test_x.py`",
    "**bold**",
    "[new]",
    "[resolved]",
    "[restored]",
    "Okafor",
    "2025-04-01",
    "$1,200",
    "3 retries",
    "because",
    "é",
    "ÉCOLE",
    "Σ",
    "a",
    "b",
    "x_y",
    "..",
    "_",
    "*",
    "`",
    "https://example.com/a.png.",
    "C:\\dir\\x.rs",
    "and/or",
    "App.tsx",
    "fails",
    "none",
    "  ",
    "\t",
    "docs/benchmarks.md",
    "openviking/session/session",
    "README",
    "24:00",
    "ValueError",
    "daylight",
    "saving",
    "switch",
    "duplicate",
    "rows",
    "header",
    "parses",
    "[CONSOLIDATION REQUIRED: this section is at its size limit. Merge and shorten the existing bullets with UPDATE; new facts are refused until then.]",
    "## Heading",
    "\r\n",
    "[silently dropped, restored]",
];

fn item(rng: &mut Rng) -> String {
    let len = 1 + rng.below(10);
    let mut out = String::new();
    for i in 0..len {
        if i > 0 {
            out.push(if rng.below(12) == 0 { '\t' } else { ' ' });
        }
        out.push_str(WORDS[rng.below(WORDS.len())]);
        if rng.below(6) == 0 {
            out.push_str(&rng.below(40).to_string());
        }
    }
    out
}

fn body(rng: &mut Rng, items: usize, pool: &[String]) -> String {
    let mut lines = Vec::new();
    for _ in 0..items {
        let text = if !pool.is_empty() && rng.below(3) == 0 {
            pool[rng.below(pool.len())].clone()
        } else {
            item(rng)
        };
        let marker = ["- ", "* ", "1. ", "", "-  "][rng.below(5)];
        lines.push(format!("{marker}{text}"));
    }
    lines.join("\n")
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(3000);
    let mut rng = Rng(13);
    let options = MergeOptions::default();
    for round in 0..rounds {
        let mut old = String::from("# Working Memory\n");
        let mut pools = Vec::new();
        for section in WorkingMemorySection::ALL.map(WorkingMemorySection::header) {
            let count = [0, 1, 3, 25, 26, 30, 60][rng.below(7)];
            let text = body(&mut rng, count, &[]);
            pools.push(
                text.split('\n')
                    .map(|line| {
                        line.trim_start_matches(['-', '*', '1', '.', ' '])
                            .to_owned()
                    })
                    .collect::<Vec<_>>(),
            );
            old.push_str(&format!("\n## {section}\n{text}\n"));
        }
        let mut sections = Map::new();
        for (i, section) in WorkingMemorySection::ALL
            .map(WorkingMemorySection::header)
            .iter()
            .enumerate()
        {
            let n = rng.below(6);
            let op = match rng.below(5) {
                0 => json!({"op": "KEEP"}),
                1 => json!({"op": "UPDATE", "content": body(&mut rng, n, &pools[i])}),
                2 => json!({"op": "UPDATE", "content": body(&mut rng, 20 + n, &pools[i])}),
                3 => {
                    let items: Vec<String> = (0..n)
                        .map(|_| {
                            if !pools[i].is_empty() && rng.below(2) == 0 {
                                pools[i][rng.below(pools[i].len())].clone()
                            } else {
                                item(&mut rng)
                            }
                        })
                        .collect();
                    json!({"op": "APPEND", "items": items})
                }
                _ => continue,
            };
            sections.insert((*section).to_owned(), op);
        }
        let ops = SectionOps::from_sections(&sections);
        let outcome = merge_text(&old, &ops, &options);
        let result = outcome.to_result();
        let value: Value = json!({
            "round": round,
            "document": result.document,
            "guards": format!("{:?}", result.guards),
            "moved": format!("{:?}", outcome.moved),
        });
        println!("{value}");
    }
}
