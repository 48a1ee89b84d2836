//! Which lock a server-side key is a record of: the lock whose name the key contains
//! (`lockpick:l` and `/locks/l/_c_…-lock-0000000001` are lock `l`'s). When several names are
//! in it, the longest wins (`lock-10` over `lock-1`); when two of that length are, it is none
//! of theirs (said in the view's notes, never guessed). The empty name (operations that name
//! no lock) is in every key and is never matched.

/// What a key is a record of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyLock {
    /// Lock `id` (its place in `names`).
    Lock(u32),
    /// No lock's name is in it.
    None,
    /// Two names of the longest length are in it.
    Tie(String, String),
}

/// The lock `key` is a record of, of the lock names `names` (id order).
pub(crate) fn lock_of(key: &str, names: &[String]) -> KeyLock {
    let mut best: Option<(usize, u32)> = None;
    let mut tie: Option<(usize, u32)> = None;
    for (id, name) in names.iter().enumerate() {
        if name.is_empty() || !key.contains(name.as_str()) {
            continue;
        }
        let here = (name.len(), id as u32);
        match best {
            Some((len, _)) if len > here.0 => {}
            Some((len, _)) if len == here.0 => tie = Some(here),
            _ => {
                best = Some(here);
                tie = None;
            }
        }
    }
    match (best, tie) {
        (Some((_, a)), Some((_, b))) => {
            KeyLock::Tie(names[a as usize].clone(), names[b as usize].clone())
        }
        (Some((_, id)), None) => KeyLock::Lock(id),
        (None, _) => KeyLock::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_name_in_the_key_wins_and_a_tie_is_nobody_s() {
        let names: Vec<String> = ["", "lock-1", "lock-10", "a", "b"]
            .map(String::from)
            .to_vec();
        assert_eq!(lock_of("lockpick:lock-10", &names), KeyLock::Lock(2));
        assert_eq!(lock_of("lockpick:lock-1", &names), KeyLock::Lock(1));
        assert_eq!(lock_of("zzz", &names), KeyLock::None);
        assert_eq!(lock_of("a:b", &names), KeyLock::Tie("a".into(), "b".into()));
    }
}
