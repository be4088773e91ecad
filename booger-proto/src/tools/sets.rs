//! The closed sets of names tools take and answer with: chunk kinds and languages.

/// A closed set of names: the enum a handler reads, and the same names as the list the
/// catalogue's schema and validation take (one declaration for both).
macro_rules! closed_set {
    ($(#[$doc:meta])* $name:ident, $(#[$list_doc:meta])* $list:ident, { $($variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant,)+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// Every member, in declaration order: `ALL[m as usize] == m`.
            pub const ALL: &[$name] = &[$($name::$variant,)+];
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        $(#[$list_doc])*
        pub const $list: &[&str] = &[$($text,)+];
    };
}

closed_set!(
    /// What a chunk can be: the daemon's chunker makes exactly these, and stores a kind as its
    /// position in [`CHUNK_KINDS`] (ranking segments on disk), so new kinds are only ever
    /// appended. `block` is top-level code between items, `gap` lines between items with no
    /// word on them, `section` a Markdown piece, `raw` other text, `test` a test case or suite
    /// (`it`, `describe`, a method marked `@Test`), `property` a property whose getter or setter
    /// is code.
    ChunkKind,
    /// Every [`ChunkKind`]'s name, in order.
    CHUNK_KINDS,
    {
        Function = "function",
        Method = "method",
        Struct = "struct",
        Enum = "enum",
        Union = "union",
        Type = "type",
        Typedef = "typedef",
        Interface = "interface",
        Class = "class",
        Impl = "impl",
        Trait = "trait",
        Mod = "mod",
        Namespace = "namespace",
        Const = "const",
        Macro = "macro",
        Declaration = "declaration",
        Import = "import",
        Block = "block",
        Section = "section",
        Raw = "raw",
        Gap = "gap",
        Test = "test",
        Property = "property",
    }
);

closed_set!(
    /// The languages files are indexed as (a test in the daemon checks them against its own).
    Language,
    /// Every [`Language`]'s name.
    LANGUAGES,
    {
        Rust = "rust",
        Python = "python",
        Javascript = "javascript",
        Typescript = "typescript",
        Tsx = "tsx",
        Go = "go",
        C = "c",
        Markdown = "markdown",
        Text = "text",
        Java = "java",
        Kotlin = "kotlin",
        Csharp = "csharp",
        Cpp = "cpp",
        Ruby = "ruby",
        Php = "php",
        Swift = "swift",
        Scala = "scala",
        Lua = "lua",
        Bash = "bash",
        Elixir = "elixir",
    }
);
