//! The minijinja environment (built from [`crate::registry`]) and the variable builder every
//! render function goes through.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};

use crate::error::{Error, Result};
pub(crate) use crate::registry::Template;
use crate::untrusted::UntrustedText;

/// Every template, so the environment can resolve `{% include %}` and tests can walk them.
pub(crate) fn all_templates() -> impl Iterator<Item = &'static Template> {
    crate::registry::all()
}

type LoadResult = std::result::Result<Environment<'static>, (&'static str, String)>;

/// The environment, built once: strict undefined (an unknown variable is an error), no
/// auto-escaping (escaping is the job of [`Vars`]), block tags trimmed so templates stay
/// readable, trailing newlines kept.
fn environment() -> Result<&'static Environment<'static>> {
    static ENVIRONMENT: OnceLock<LoadResult> = OnceLock::new();
    let loaded = ENVIRONMENT.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        let syntax = minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .map_err(|err| ("<syntax>", err.to_string()))?;
        env.set_syntax(syntax);
        for template in all_templates() {
            env.add_template(template.name, template.source)
                .map_err(|err| (template.name, err.to_string()))?;
        }
        Ok(env)
    });
    loaded.as_ref().map_err(|(template, message)| Error::Load {
        template,
        message: message.clone(),
    })
}

/// The variables of one render, built slot by slot. Untrusted text is escaped for the
/// template's boundary tags as it goes in; everything else is a number, a flag or a
/// `&'static str` constant from this code base, so no runtime string reaches a template
/// without escaping.
#[derive(Debug)]
pub(crate) struct Vars {
    template: &'static Template,
    values: BTreeMap<String, Value>,
}

impl Vars {
    pub(crate) fn new(template: &'static Template) -> Self {
        Self {
            template,
            values: BTreeMap::new(),
        }
    }

    /// An empty record for a list item of the same template (same escaping).
    pub(crate) fn record(&self) -> Self {
        Self::new(self.template)
    }

    fn set(mut self, name: &'static str, value: Value) -> Self {
        self.values.insert(name.to_owned(), value);
        self
    }

    /// Untrusted text, boundary tags and control tokens neutralized.
    pub(crate) fn text(self, name: &'static str, text: &UntrustedText) -> Self {
        let escaped = text.escaped(self.template.boundary_tags);
        self.set(name, Value::from(escaped))
    }

    /// Untrusted text placed under a provenance label: as [`Self::text`], and no line of it
    /// starts like a label.
    pub(crate) fn labelled_text(self, name: &'static str, text: &UntrustedText) -> Self {
        let escaped = text.escaped_under_label(self.template.boundary_tags);
        self.set(name, Value::from(escaped))
    }

    /// Untrusted text on one line, boundary tags and control tokens neutralized.
    pub(crate) fn inline_text(self, name: &'static str, text: &UntrustedText) -> Self {
        let escaped = text.escaped_inline(self.template.boundary_tags);
        self.set(name, Value::from(escaped))
    }

    /// Optional untrusted text (`none` in the template when absent).
    pub(crate) fn optional_text(self, name: &'static str, text: Option<&UntrustedText>) -> Self {
        let escaped = text.map(|text| text.escaped(self.template.boundary_tags));
        self.set(name, Value::from(escaped))
    }

    /// Optional untrusted text on one line.
    pub(crate) fn optional_inline_text(
        self,
        name: &'static str,
        text: Option<&UntrustedText>,
    ) -> Self {
        let escaped = text.map(|text| text.escaped_inline(self.template.boundary_tags));
        self.set(name, Value::from(escaped))
    }

    /// A list of untrusted texts.
    pub(crate) fn text_list(self, name: &'static str, texts: &[UntrustedText]) -> Self {
        let tags = self.template.boundary_tags;
        let escaped: Value = texts.iter().map(|text| text.escaped(tags)).collect();
        self.set(name, escaped)
    }

    /// Untrusted text with `&`, `<` and `>` escaped as XML entities.
    pub(crate) fn xml_text(self, name: &'static str, text: &UntrustedText) -> Self {
        let escaped = text.escaped_xml();
        self.set(name, Value::from(escaped))
    }

    /// A number.
    pub(crate) fn number(self, name: &'static str, value: impl Into<i128>) -> Self {
        self.set(name, Value::from(value.into()))
    }

    /// A yes/no switch.
    pub(crate) fn flag(self, name: &'static str, value: bool) -> Self {
        self.set(name, Value::from(value))
    }

    /// Text written in this code base (a file name, a tag, an enum's label).
    pub(crate) fn constant(self, name: &'static str, value: &'static str) -> Self {
        self.set(name, Value::from(value))
    }

    /// A list of records built with [`Self::record`].
    pub(crate) fn records(self, name: &'static str, records: Vec<Vars>) -> Self {
        let list: Value = records
            .into_iter()
            .map(|record| Value::from(record.values))
            .collect();
        self.set(name, list)
    }

    /// The names of the variables set so far.
    #[cfg(test)]
    pub(crate) fn names(&self) -> std::collections::BTreeSet<String> {
        self.values.keys().cloned().collect()
    }

    /// Renders the template with these variables.
    pub(crate) fn render(self) -> Result<String> {
        let template_name = self.template.name;
        let render_error = |error| Error::Render {
            template: template_name,
            error,
        };
        environment()?
            .get_template(template_name)
            .map_err(render_error)?
            .render(Value::from(self.values))
            .map_err(render_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_parses() {
        let env = environment().unwrap();
        for template in all_templates() {
            env.get_template(template.name).unwrap();
        }
    }

    #[test]
    fn an_unknown_variable_is_an_error() {
        // The continuation template needs `objective` and the budget lines; leave them out.
        let vars = Vars::new(&crate::registry::goals::CONTINUATION).number("tokens_used", 1);
        let err = vars.render().unwrap_err();
        assert!(
            matches!(
                err,
                Error::Render {
                    template: "goals/continuation.md",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("undefined"), "{err}");
    }

    #[test]
    fn inline_text_collapses_line_breaks_only() {
        let text = UntrustedText::new("a  b\n\n c\r\nd\te");
        assert_eq!(text.escaped_inline(&[]), "a  b c d\te");
    }
}
