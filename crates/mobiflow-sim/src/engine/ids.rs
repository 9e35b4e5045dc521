//! Typed ids of the engine's objects, and the vectors they index.
//!
//! A flow, a link direction and a node are each a `u32` index, but of different
//! tables: a [`FlowId`] indexes `Scenario::flows` and the engine's per-flow state, a
//! [`DirId`] the link directions (link `l`'s a→b direction is `DirId::of(l, 0)`, its
//! b→a one `DirId::of(l, 1)`), a [`NodeId`] `Scenario::nodes`. An [`IdVec`] can only be
//! indexed by its own kind of id, so mixing them up is a compile error rather than a
//! wrong flow. Each is four bytes, so the event entries stay small (`Entry`,
//! `ArrivalEntry`).

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// An id: a `u32` index of one kind of table.
pub trait Id: Copy {
    fn new(i: usize) -> Self;
    fn index(self) -> usize;
}

macro_rules! ids {
    ($( $(#[$meta:meta])* $name:ident ),+ $(,)?) => {$(
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The id of the `i`-th object of its table.
            #[inline(always)]
            pub fn new(i: usize) -> Self {
                $name(u32::try_from(i).expect("fewer than 2^32 of each object"))
            }
            /// Its place in its table.
            #[inline(always)]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl Id for $name {
            #[inline(always)]
            fn new(i: usize) -> Self {
                $name::new(i)
            }
            #[inline(always)]
            fn index(self) -> usize {
                $name::index(self)
            }
        }
    )+};
}

ids! {
    /// A flow: its place in `Scenario::flows`.
    FlowId,
    /// A link direction: `2 × link + k`, `k` = 0 for a→b and 1 for b→a.
    DirId,
    /// A node: its place in `Scenario::nodes`.
    NodeId,
}

impl DirId {
    /// Direction `k` (0: a→b, 1: b→a) of link `link`.
    pub fn of(link: usize, k: usize) -> DirId {
        debug_assert!(k < 2);
        DirId::new(2 * link + k)
    }
    /// Which direction of its link: 0 for a→b, 1 for b→a.
    pub fn k(self) -> usize {
        self.index() % 2
    }
    /// The link it is a direction of (its place in `Scenario::links`).
    pub fn link(self) -> usize {
        self.index() / 2
    }
}

/// A vector indexed by one kind of id.
#[derive(Clone, Debug)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    id: PhantomData<I>,
}

impl<I: Id, T> IdVec<I, T> {
    pub fn with_capacity(n: usize) -> Self {
        IdVec::from(Vec::with_capacity(n))
    }
    pub fn push(&mut self, item: T) -> I {
        self.items.push(item);
        I::new(self.items.len() - 1)
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }
    /// The items with their ids.
    pub fn iter_ids(&self) -> impl Iterator<Item = (I, &T)> {
        self.items.iter().enumerate().map(|(i, x)| (I::new(i), x))
    }
    /// The items with their ids, mutably.
    pub fn iter_ids_mut(&mut self) -> impl Iterator<Item = (I, &mut T)> {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, x)| (I::new(i), x))
    }
}

impl<I, T> From<Vec<T>> for IdVec<I, T> {
    fn from(items: Vec<T>) -> Self {
        IdVec {
            items,
            id: PhantomData,
        }
    }
}

impl<I, T> IntoIterator for IdVec<I, T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<I: Id, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<X: IntoIterator<Item = T>>(it: X) -> Self {
        IdVec::from(it.into_iter().collect::<Vec<T>>())
    }
}

impl<I: Id, T> Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: I) -> &T {
        &self.items[i.index()]
    }
}

impl<I: Id, T> IndexMut<I> for IdVec<I, T> {
    #[inline(always)]
    fn index_mut(&mut self, i: I) -> &mut T {
        &mut self.items[i.index()]
    }
}

impl<'a, I: Id, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, I: Id, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_of_a_link_and_typed_indexing() {
        assert_eq!(DirId::of(0, 0), DirId(0));
        assert_eq!(DirId::of(3, 1), DirId(7));
        assert_eq!((DirId(7).link(), DirId(6).link()), (3, 3));
        let mut v: IdVec<FlowId, &str> = IdVec::with_capacity(2);
        let a = v.push("a");
        let b = v.push("b");
        assert_eq!((a, b), (FlowId(0), FlowId(1)));
        v[b] = "B";
        assert_eq!(v.iter_ids().collect::<Vec<_>>(), [(a, &"a"), (b, &"B")]);
        assert_eq!(std::mem::size_of::<Option<DirId>>(), 8);
    }
}
