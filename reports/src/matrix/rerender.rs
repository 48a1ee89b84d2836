//! A published page made again from its record alone (`matrix render`): the command that
//! makes it from nothing and its "since the last publication" section are kept from the page
//! it replaces, the rest is rendered anew, so that expectations or notes changed after the
//! runs show on the page without running anything again.

use super::markdown::matrix_markdown;
use super::note_render::StaleNotes;
use super::record::MatrixRecord;
use std::fmt;

/// Where the command sits in a page [`matrix_markdown`] wrote.
const AGAIN_OPENS: &str = "To make it again from nothing:\n\n```\n";
/// The section [`super::since_section`] appends.
const SINCE_OPENS: &str = "\n## Since the last publication\n";

/// Why a page could not be made again.
#[derive(Debug)]
pub enum RerenderError {
    /// The old page has no command block where lockpick writes one: it was not written by
    /// `matrix --markdown`, or was edited by hand.
    NoCommand,
    /// A note disagrees with its cell's runs.
    Stale(StaleNotes),
}

impl fmt::Display for RerenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RerenderError::NoCommand => write!(
                f,
                "the page has no \"To make it again from nothing:\" command block; allowed: a page `matrix --markdown` wrote"
            ),
            RerenderError::Stale(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for RerenderError {}

/// The command a page says makes it again from nothing.
pub fn page_again(page: &str) -> Option<&str> {
    let start = page.find(AGAIN_OPENS)? + AGAIN_OPENS.len();
    let len = page[start..].find("\n```")?;
    Some(&page[start..start + len]).filter(|c| !c.trim().is_empty())
}

/// `record` as a page, in place of `old_page` (the page made from it before): its command
/// and its "since" section kept.
pub fn rerendered_page(record: &MatrixRecord, old_page: &str) -> Result<String, RerenderError> {
    let again = page_again(old_page).ok_or(RerenderError::NoCommand)?;
    let mut text = matrix_markdown(record, again).map_err(RerenderError::Stale)?;
    if let Some(at) = old_page.find(SINCE_OPENS) {
        text.push_str(&old_page[at..]);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_read_from_where_the_page_writes_it() {
        let page = "# Safety matrix `m`\n\nTo make it again from nothing:\n\n```\nlockpick matrix m.toml --seeds 10\n```\n\nThe last command";
        assert_eq!(page_again(page), Some("lockpick matrix m.toml --seeds 10"));
        assert_eq!(page_again("# a page edited by hand\n"), None);
        assert_eq!(
            page_again("To make it again from nothing:\n\n```\n\n```\n"),
            None
        );
    }
}
