//! [`SortedIndex`]: a lookup index over a slice that keeps no copy of the
//! keys.

/// Positions of a slice's items, sorted by a key each item holds (its name,
/// or a server id and a name): looked up by binary search with the items'
/// own strings. A `HashMap<String, usize>` beside the items would hold a
/// second copy of every name (an allocation each); this holds one `usize`
/// per item. The caller passes the same slice and key function to
/// [`SortedIndex::new`] and [`SortedIndex::find`].
#[derive(Debug, Clone, Default)]
pub(crate) struct SortedIndex(Box<[usize]>);

impl SortedIndex {
    /// The index of `items` by `key`.
    pub(crate) fn new<'a, T, K: Ord>(items: &'a [T], key: impl Fn(&'a T) -> K) -> Self {
        let mut positions: Vec<usize> = (0..items.len()).collect();
        positions.sort_unstable_by(|&a, &b| key(&items[a]).cmp(&key(&items[b])));
        Self(positions.into_boxed_slice())
    }

    /// The position in `items` of an item whose key is `wanted` (keys are
    /// unique where this is used).
    pub(crate) fn find<'a, T, K: Ord>(
        &self,
        items: &'a [T],
        key: impl Fn(&'a T) -> K,
        wanted: &K,
    ) -> Option<usize> {
        let at = (self.0)
            .binary_search_by(|&i| key(&items[i]).cmp(wanted))
            .ok()?;
        Some(self.0[at])
    }
}

#[cfg(test)]
mod tests {
    use super::SortedIndex;

    #[test]
    fn finds_every_item_by_its_key_and_nothing_else() {
        let items = ["delta", "alpha", "charlie", "bravo", "échelle", ""];
        let index = SortedIndex::new(&items, |s| *s);
        for (i, item) in items.iter().enumerate() {
            assert_eq!(index.find(&items, |s| *s, item), Some(i));
        }
        assert_eq!(index.find(&items, |s| *s, &"echo"), None);
        let pairs = [("s2", "a"), ("s1", "b"), ("s1", "a")];
        let index = SortedIndex::new(&pairs, |p| *p);
        assert_eq!(index.find(&pairs, |p| *p, &("s1", "a")), Some(2));
        assert_eq!(index.find(&pairs, |p| *p, &("s2", "b")), None);
        let empty: [&str; 0] = [];
        assert_eq!(
            SortedIndex::new(&empty, |s| *s).find(&empty, |s| *s, &"a"),
            None
        );
    }
}
