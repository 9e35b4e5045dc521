//! Enums with names: one declaration gives the variants, their names (and accepted
//! aliases), `NAMES`, `name()`, and the parsing (`Named::parse` and `FromStr`) whose
//! error lists the valid names.
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
//! assert_eq!("GREEN".parse::<Colour>(), Ok(Colour::Green));
//! assert_eq!(Colour::Green.name(), "green");
//! assert_eq!(
//!     Colour::parse("blue").unwrap_err(),
//!     "unknown colour \"blue\"; expected one of red, green"
//! );
//! ```
//!
//! Two options loosen the spelling: `ignoring "CHARS"` drops those characters from
//! the input before matching, `reading "A" as "B"` replaces one text by another.
//!
//! ```
//! mobiflow_proto::named_enum! {
//!     #[derive(Copy, Clone, Debug, PartialEq, Eq)]
//!     pub enum Rule ("rule", ignoring "-_ ") {
//!         Rfc5681 = "rfc5681",
//!         Linux = "linux",
//!     }
//! }
//! mobiflow_proto::named_enum! {
//!     #[derive(Copy, Clone, Debug, PartialEq, Eq)]
//!     pub enum Signal ("signal", reading "_" as "-") {
//!         AckOption = "ack-option" | "option",
//!         OutOfBand = "out-of-band",
//!     }
//! }
//! assert_eq!("RFC-5681".parse::<Rule>(), Ok(Rule::Rfc5681));
//! assert_eq!("rfc 5681".parse::<Rule>(), Ok(Rule::Rfc5681));
//! assert_eq!("out_of-band".parse::<Signal>(), Ok(Signal::OutOfBand));
//! // The error quotes the input as written.
//! assert_eq!(
//!     "Out of band".parse::<Signal>().unwrap_err(),
//!     "unknown signal \"Out of band\"; expected one of ack-option, out-of-band"
//! );
//! ```
//!
//! A name that parsing could never match (one with an uppercase letter, or with a
//! character that `ignoring` drops or `reading` replaces) is refused at compile time:
//!
//! ```compile_fail,E0080
//! mobiflow_proto::named_enum! {
//!     #[derive(Copy, Clone, Debug, PartialEq, Eq)]
//!     pub enum Rule ("rule", ignoring "-_ ") {
//!         Rfc5681 = "rfc-5681",
//!     }
//! }
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

/// Whether every one of `names` can be matched by a parser that lowercases its input
/// and drops (or replaces) `chars`: no name holds an ASCII uppercase letter or one of
/// `chars`. [`named_enum!`](crate::named_enum) checks its names with it at compile time.
#[doc(hidden)]
pub const fn matchable(names: &[&str], chars: &str) -> bool {
    let chars = chars.as_bytes();
    let mut i = 0;
    while i < names.len() {
        let name = names[i].as_bytes();
        let mut j = 0;
        while j < name.len() {
            if name[j].is_ascii_uppercase() {
                return false;
            }
            let mut k = 0;
            while k < chars.len() {
                if name[j] == chars[k] {
                    return false;
                }
                k += 1;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

/// Declares a named enum, or names the variants of an enum declared elsewhere.
///
/// `enum E ("what") { V = "name" | "alias", ... }` declares `E` and implements
/// [`Named`](crate::named::Named) and `FromStr` (with `String` errors): an unknown
/// name is refused with `unknown what "x"; expected one of a, b`. Options after
/// `"what"`, in this order: `expected "TEXT"` replaces `one of a, b` (for messages that
/// predate the macro); `quoting lowercase` quotes the name lowercased rather than as
/// written; `ignoring "CHARS"` drops those characters from the (lowercased) input
/// before matching; `reading "A" as "B"` replaces `A` by `B` in it. `impl E (...) { ...
/// }` implements the same for an enum `E` declared elsewhere in the crate.
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident (
            $what:literal
            $(, expected $expected:literal)?
            $(, quoting $lower:ident)?
            $(, ignoring $ignored:literal)?
            $(, reading $from:literal as $to:literal)?
        ) {
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
            impl $name (
                $what
                $(, expected $expected)?
                $(, quoting $lower)?
                $(, ignoring $ignored)?
                $(, reading $from as $to)?
            ) {
                $( $variant = $text $(| $alias)* ),+
            }
        }
    };
    (
        impl $name:ident (
            $what:literal
            $(, expected $expected:literal)?
            $(, quoting $lower:ident)?
            $(, ignoring $ignored:literal)?
            $(, reading $from:literal as $to:literal)?
        ) {
            $( $variant:ident = $text:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        const _: () = assert!(
            $crate::named::matchable(
                &[$($text $(, $alias)*),+],
                concat!("" $(, $ignored)? $(, $from)?)
            ),
            concat!(
                "a name or alias of ",
                stringify!($name),
                " holds an uppercase letter or a character that parsing drops or replaces"
            )
        );
        impl $crate::named::Named for $name {
            const NAMES: &'static [&'static str] = &[$($text),+];
            fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $text ),+
                }
            }
            fn parse(s: &str) -> Result<Self, String> {
                let lower = s.to_ascii_lowercase();
                let key: &str = &lower;
                $(
                    let dropped = key.replace(|c: char| $ignored.contains(c), "");
                    let key: &str = &dropped;
                )?
                $(
                    let replaced = key.replace($from, $to);
                    let key: &str = &replaced;
                )?
                match key {
                    $( $text $(| $alias)* => Ok($name::$variant), )+
                    _ => {
                        let shown: &str = $crate::named_enum!(@shown s, lower $(, $lower)?);
                        let expected: String = $crate::named_enum!(@expected Self $(, $expected)?);
                        Err(format!("unknown {} {shown:?}; expected {expected}", $what))
                    }
                }
            }
        }
        impl ::std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                <Self as $crate::named::Named>::parse(s)
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
