//! How a printed command names a store and a path, shared by the binary's reproduce lines and
//! the harness's (explore's): one default store name and one quoting rule, so that every
//! command pasted into a shell repeats the run into the store it was made in.

use std::borrow::Cow;
use std::path::Path;

/// The store the commands use when `--store` is not given (their clap default).
pub const DEFAULT_STORE: &str = "store";

/// `word` as one shell word: as it is when it has nothing a shell would read, else in single
/// quotes.
pub fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// `path` as one shell word.
pub fn path_word(path: &Path) -> String {
    shell_word(&path.display().to_string()).into_owned()
}

/// ` --store DIR` when `store` is not [`DEFAULT_STORE`], else nothing.
pub fn store_flag(store: &Path) -> String {
    if store == Path::new(DEFAULT_STORE) {
        String::new()
    } else {
        format!(" --store {}", path_word(store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_is_named_only_when_not_the_default_and_quoted_when_a_shell_would_split_it() {
        assert_eq!(store_flag(Path::new("store")), "");
        assert_eq!(store_flag(Path::new("runs/x")), " --store runs/x");
        assert_eq!(store_flag(Path::new("my runs")), " --store 'my runs'");
        assert_eq!(store_flag(Path::new("it's")), r" --store 'it'\''s'");
    }
}
