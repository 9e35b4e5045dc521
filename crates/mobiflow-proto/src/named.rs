//! Enums with names: one declaration gives the variants, their names (and accepted
//! aliases), `NAMES`, `name()` and the parsing whose error lists the valid names.
//!
//! ```
//! mobiflow_proto::named_enum! {
//!     /// A colour.
//!     #[derive(Copy, Clone, Debug, PartialEq, Eq)]
//!     pub enum Colour ("colour") {
//!         Red = "red" | "rouge",
//!         Green = "green",
//!     }
//! }
//! use mobiflow_proto::named::Named;
//! assert_eq!(Colour::parse("Rouge"), Ok(Colour::Red));
//! assert_eq!(Colour::Green.name(), "green");
//! assert_eq!(
//!     Colour::parse("blue").unwrap_err(),
//!     "unknown colour \"blue\"; expected one of red, green"
//! );
//! ```
//!
//! It lives in the protocol crate so that the protocol's enums and the simulator's
//! scenario enums name their variants the same way; `mobiflow_sim` re-exports both the
//! trait (`mobiflow_sim::named`) and the macro.

/// A name <-> variant mapping; implemented by [`named_enum!`](crate::named_enum).
pub trait Named: Sized + Copy + 'static {
    /// The names, in declaration order (aliases are accepted but not listed).
    const NAMES: &'static [&'static str];
    fn name(self) -> &'static str;
    /// The variant named `s` (case-insensitive), or an error that lists the names.
    fn parse(s: &str) -> Result<Self, String>;
}

/// Declares a named enum, or names the variants of an enum declared elsewhere.
///
/// `enum E ("what") { V = "name" | "alias", ... }` declares `E` and implements
/// [`Named`](crate::named::Named): an unknown name is refused with `unknown what "x";
/// expected one of a, b`. Options after `"what"`: `expected "TEXT"` replaces `one of
/// a, b` (for messages that predate the macro), and `quoting lowercase` quotes the name
/// lowercased rather than as written. `impl E (...) { ... }` implements `Named` for an
/// existing enum `E` (e.g. one of `mobiflow-proto`).
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal $(, expected $expected:literal)? $(, quoting $lower:ident)?) {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name { $( $(#[$vmeta])* $variant ),+ }
        impl $name {
            /// The names, in declaration order.
            #[allow(dead_code)]
            pub const NAMES: &'static [&'static str] = <Self as $crate::named::Named>::NAMES;
            /// The variant's name.
            #[allow(dead_code)]
            pub fn name(self) -> &'static str {
                <Self as $crate::named::Named>::name(self)
            }
        }
        $crate::named_enum! {
            impl $name ($what $(, expected $expected)? $(, quoting $lower)?) {
                $( $variant = $text $(| $alias)* ),+
            }
        }
    };
    (
        impl $name:ident ($what:literal $(, expected $expected:literal)? $(, quoting $lower:ident)?) {
            $( $variant:ident = $text:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        impl $crate::named::Named for $name {
            const NAMES: &'static [&'static str] = &[$($text),+];
            fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $text ),+
                }
            }
            fn parse(s: &str) -> Result<Self, String> {
                let lower = s.to_ascii_lowercase();
                match lower.as_str() {
                    $( $text $(| $alias)* => Ok($name::$variant), )+
                    _ => {
                        let shown: &str = $crate::named_enum!(@shown s, lower $(, $lower)?);
                        let expected: String = $crate::named_enum!(@expected Self $(, $expected)?);
                        Err(format!("unknown {} {shown:?}; expected {expected}", $what))
                    }
                }
            }
        }
    };
    (@shown $s:ident, $l:ident) => { $s };
    (@shown $s:ident, $l:ident, lowercase) => { $l.as_str() };
    (@expected $t:ty) => {
        format!("one of {}", <$t as $crate::named::Named>::NAMES.join(", "))
    };
    (@expected $t:ty, $e:literal) => { $e.to_string() };
}
