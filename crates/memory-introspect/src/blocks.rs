//! Memory files cut into blocks, the unit the index searches: a paragraph (lines up to a blank
//! line), a heading starting a new block, at most [`MAX_BLOCK_LINES`] lines each. Every block
//! knows its first line and the heading it sits under.

/// Longest block in lines; a longer paragraph is cut into several.
pub(crate) const MAX_BLOCK_LINES: usize = 40;

/// One block of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// Line number of the block's first line, 1-based.
    pub(crate) start_line: u32,
    /// The nearest Markdown heading at or above the block.
    pub(crate) heading: Option<String>,
    /// The block's lines, control characters (other than tabs) replaced by spaces.
    pub(crate) text: String,
}

/// The text of a Markdown heading line (`## Build` gives `Build`), if it is one.
pub(crate) fn heading_text(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = trimmed.get(level..)?;
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim()))
}

/// Cuts `text` into blocks (see the module docs).
pub(crate) fn split_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut heading: Option<String> = None;
    let mut current: Vec<&str> = Vec::new();
    let mut start = 0u32;
    let flush =
        |blocks: &mut Vec<Block>, current: &mut Vec<&str>, start: u32, heading: &Option<String>| {
            if current.is_empty() {
                return;
            }
            blocks.push(Block {
                start_line: start,
                heading: heading.clone(),
                text: clean(&current.join("\n")),
            });
            current.clear();
        };
    for (index, line) in text.lines().enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        if line.trim().is_empty() {
            flush(&mut blocks, &mut current, start, &heading);
            continue;
        }
        if let Some((_, title)) = heading_text(line) {
            flush(&mut blocks, &mut current, start, &heading);
            heading = (!title.is_empty()).then(|| clean(title));
        } else if current.len() >= MAX_BLOCK_LINES {
            flush(&mut blocks, &mut current, start, &heading);
        }
        if current.is_empty() {
            start = number;
        }
        current.push(line);
    }
    flush(&mut blocks, &mut current, start, &heading);
    blocks
}

/// Control characters other than tabs and newlines become spaces, so the index's own markers
/// cannot occur in indexed text.
fn clean(text: &str) -> String {
    text.chars()
        .map(|ch| {
            if ch.is_control() && ch != '\n' && ch != '\t' {
                ' '
            } else {
                ch
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn paragraphs_and_headings_make_blocks_with_their_lines() {
        let text = "# Memory\nintro line\n\n## Build\n- cargo test\n- cargo fmt\n\n\nlast\n";
        let blocks = split_blocks(text);
        let shape: Vec<(u32, Option<&str>, &str)> = blocks
            .iter()
            .map(|b| (b.start_line, b.heading.as_deref(), b.text.as_str()))
            .collect();
        assert_eq!(
            shape,
            vec![
                (1, Some("Memory"), "# Memory\nintro line"),
                (4, Some("Build"), "## Build\n- cargo test\n- cargo fmt"),
                (9, Some("Build"), "last"),
            ]
        );
        assert_eq!(heading_text("#no space"), None);
        assert_eq!(heading_text("    # indented code"), None);
        assert_eq!(heading_text("### Pitfalls ###"), Some((3, "Pitfalls")));
    }

    #[test]
    fn long_paragraphs_are_cut() {
        let text = (0..100)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let blocks = split_blocks(&text);
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[1].start_line, 41);
        assert!(blocks[1].text.starts_with("line 40\n"));
    }

    proptest! {
        #[test]
        fn every_non_blank_line_lands_in_exactly_one_block_at_its_line(text in "(\\PC{0,12}|#{1,3} \\PC{0,8}|\n){0,40}") {
            let blocks = split_blocks(&text);
            let lines: Vec<&str> = text.lines().collect();
            let mut covered = 0;
            for block in &blocks {
                for (offset, line) in block.text.lines().enumerate() {
                    let original = lines[block.start_line as usize - 1 + offset];
                    prop_assert_eq!(line, clean(original));
                    covered += 1;
                }
            }
            prop_assert_eq!(covered, lines.iter().filter(|l| !l.trim().is_empty()).count());
        }
    }
}
