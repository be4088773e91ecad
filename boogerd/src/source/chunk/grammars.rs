//! What each language's syntax tree means to the chunker: one [`Grammar`] per language, a
//! tree-sitter grammar and a table from node kinds to [`Role`]s. The walk in `code.rs` is the
//! same for all of them.
//!
//! Adding a language: a row in `lang::SPECS` (name, extensions, interpreters), the grammar
//! crate in Cargo.toml, and a `Grammar` here: the node kinds that are functions, types,
//! containers (whose members are chunks of their own) and imports, read off the grammar's
//! `node-types.json`; `Ask` for a kind whose role depends on the node (an answer in
//! `refine.rs`); the kinds that hold a container's members when it has no `body` field; and
//! the test conventions. Then a fixture in `chunk/tests.rs` that lists what it finds.

use std::sync::OnceLock;

use booger_proto::tools::ChunkKind;
use tree_sitter::{Language, Node};

use super::role::Role;
use super::{js, refine};
use crate::source::lang::{Lang, SPECS};

/// How tests are written in a language, beyond test files' paths.
pub(super) struct TestForms {
    /// Text before a function's name that makes it a test: an annotation or attribute.
    pub marks: &'static [&'static str],
    /// A method whose name starts so (then a capital or `_`) is a test: PHPUnit, XCTest,
    /// minitest.
    pub method_prefix: Option<&'static str>,
}

const NO_TESTS: TestForms = TestForms { marks: &[], method_prefix: None };

pub(super) struct Grammar {
    pub language: fn() -> Language,
    pub roles: &'static [(&'static str, Role)],
    /// The role of a node whose kind is `Ask` in `roles`.
    pub ask: fn(Node, &[u8]) -> Option<Role>,
    /// Where a container's members are when it has no `body` field: the first node of one of
    /// these kinds below it (a Kotlin `class_body`, a Ruby call's `do … end`).
    pub bodies: &'static [&'static str],
    /// Names written `Scope::name`, `Table.name` or `Table:name` are methods of their scope.
    pub qualified_names: bool,
    pub tests: TestForms,
    /// Whose grammar this is: where its roles by kind id are kept ([`BY_ID`]).
    lang: Lang,
}

/// Each grammar's `roles` by node kind id, made on first use: the walk asks for the role of
/// every item and its siblings, and a kind id indexes where a name would be compared with
/// every row. By `Lang` (its place in `lang::SPECS`).
static BY_ID: [OnceLock<Vec<Option<Role>>>; SPECS.len()] = [const { OnceLock::new() }; SPECS.len()];

impl Grammar {
    pub(super) fn role(&self, node: Node, src: &[u8]) -> Option<Role> {
        if node.is_error() {
            return Some(Role::Transparent);
        }
        let by_id = BY_ID[self.lang as usize].get_or_init(|| self.table());
        match by_id.get(usize::from(node.kind_id())).copied().flatten()? {
            Role::Ask => (self.ask)(node, src),
            role => Some(role),
        }
    }

    /// Every named kind id of the grammar (an alias has an id of its own) → its row's role.
    fn table(&self) -> Vec<Option<Role>> {
        let language = (self.language)();
        (0..language.node_kind_count())
            .map(|id| {
                let id = id as u16;
                let name = language.node_kind_for_id(id).filter(|_| language.node_kind_is_named(id))?;
                self.roles.iter().find(|(kind, _)| *kind == name).map(|(_, role)| *role)
            })
            .collect()
    }
}

fn nothing(_: Node, _: &[u8]) -> Option<Role> {
    None
}

const fn grammar(lang: Lang, language: fn() -> Language, roles: &'static [(&'static str, Role)]) -> Grammar {
    Grammar { language, roles, ask: nothing, bodies: &[], qualified_names: false, tests: NO_TESTS, lang }
}

use Role::*;

const C_ROLES: &[(&str, Role)] = &[
    ("function_definition", Function),
    ("type_definition", Type(ChunkKind::Typedef)),
    ("struct_specifier", Ask),
    ("union_specifier", Ask),
    ("enum_specifier", Ask),
    ("declaration", Ask),
    ("preproc_include", Import),
    ("preproc_def", Type(ChunkKind::Macro)),
    ("preproc_function_def", Type(ChunkKind::Macro)),
    ("preproc_if", Transparent),
    ("preproc_ifdef", Transparent),
    ("preproc_else", Transparent),
    ("preproc_elif", Transparent),
    ("preproc_elifdef", Transparent),
    ("linkage_specification", Transparent),
    ("declaration_list", Transparent),
];

const CPP_ROLES: &[(&str, Role)] = &[
    ("function_definition", Ask),
    ("expression_statement", Ask),
    ("type_definition", Type(ChunkKind::Typedef)),
    ("class_specifier", Ask),
    ("struct_specifier", Ask),
    ("union_specifier", Ask),
    ("enum_specifier", Ask),
    ("declaration", Ask),
    ("field_declaration", Ask),
    ("template_declaration", Wrapper),
    ("namespace_definition", Container(ChunkKind::Namespace)),
    ("alias_declaration", Type(ChunkKind::Type)),
    ("concept_definition", Type(ChunkKind::Type)),
    ("using_declaration", Import),
    ("preproc_include", Import),
    ("preproc_def", Type(ChunkKind::Macro)),
    ("preproc_function_def", Type(ChunkKind::Macro)),
    ("preproc_if", Transparent),
    ("preproc_ifdef", Transparent),
    ("preproc_else", Transparent),
    ("preproc_elif", Transparent),
    ("preproc_elifdef", Transparent),
    ("linkage_specification", Transparent),
    ("declaration_list", Transparent),
];

const JS_ROLES: &[(&str, Role)] = &[
    ("function_declaration", Function),
    ("generator_function_declaration", Function),
    ("function_signature", Function),
    ("method_definition", Function),
    ("abstract_method_signature", Function),
    ("class_declaration", Container(ChunkKind::Class)),
    ("abstract_class_declaration", Container(ChunkKind::Class)),
    ("internal_module", Container(ChunkKind::Namespace)),
    ("module", Container(ChunkKind::Namespace)),
    ("interface_declaration", Type(ChunkKind::Interface)),
    ("type_alias_declaration", Type(ChunkKind::Type)),
    ("enum_declaration", Type(ChunkKind::Enum)),
    ("import_statement", Import),
    ("export_statement", Wrapper),
    ("expression_statement", Ask),
    ("call_expression", Ask),
    ("lexical_declaration", Ask),
    ("variable_declaration", Ask),
];

const JS: Grammar =
    Grammar { ask: js::role, ..grammar(Lang::JavaScript, || tree_sitter_javascript::LANGUAGE.into(), JS_ROLES) };

/// The grammar of a language chunked structurally; `None` for Markdown and plain text.
pub(super) fn of(lang: Lang) -> Option<&'static Grammar> {
    Some(match lang {
        Lang::Rust => &RUST,
        Lang::Python => &PYTHON,
        Lang::JavaScript => &JS,
        Lang::TypeScript => &TYPESCRIPT,
        Lang::Tsx => &TSX,
        Lang::Go => &GO,
        Lang::C => &C,
        Lang::Java => &JAVA,
        Lang::Kotlin => &KOTLIN,
        Lang::CSharp => &CSHARP,
        Lang::Cpp => &CPP,
        Lang::Ruby => &RUBY,
        Lang::Php => &PHP,
        Lang::Swift => &SWIFT,
        Lang::Scala => &SCALA,
        Lang::Lua => &LUA,
        Lang::Bash => &BASH,
        Lang::Elixir => &ELIXIR,
        Lang::Markdown | Lang::Text => return None,
    })
}

static RUST: Grammar = Grammar {
    ask: refine::rust,
    ..grammar(
        Lang::Rust,
        || tree_sitter_rust::LANGUAGE.into(),
        &[
            ("function_item", Function),
            ("function_signature_item", Function),
            ("struct_item", Type(ChunkKind::Struct)),
            ("enum_item", Type(ChunkKind::Enum)),
            ("union_item", Type(ChunkKind::Union)),
            ("type_item", Type(ChunkKind::Type)),
            ("const_item", Type(ChunkKind::Const)),
            ("static_item", Type(ChunkKind::Const)),
            ("macro_definition", Type(ChunkKind::Macro)),
            ("impl_item", Container(ChunkKind::Impl)),
            ("trait_item", Container(ChunkKind::Trait)),
            ("mod_item", Ask),
            ("use_declaration", Import),
            ("extern_crate_declaration", Import),
        ],
    )
};

static PYTHON: Grammar = grammar(
    Lang::Python,
    || tree_sitter_python::LANGUAGE.into(),
    &[
        ("function_definition", Function),
        ("class_definition", Container(ChunkKind::Class)),
        ("decorated_definition", Wrapper),
        ("import_statement", Import),
        ("import_from_statement", Import),
        ("future_import_statement", Import),
    ],
);

static TYPESCRIPT: Grammar =
    Grammar { language: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), lang: Lang::TypeScript, ..JS };
static TSX: Grammar = Grammar { language: || tree_sitter_typescript::LANGUAGE_TSX.into(), lang: Lang::Tsx, ..JS };

static GO: Grammar = Grammar {
    ask: refine::go,
    ..grammar(
        Lang::Go,
        || tree_sitter_go::LANGUAGE.into(),
        &[
            ("function_declaration", Function),
            ("method_declaration", Function),
            ("type_declaration", Ask),
            ("import_declaration", Import),
        ],
    )
};

static C: Grammar = Grammar { ask: refine::c, ..grammar(Lang::C, || tree_sitter_c::LANGUAGE.into(), C_ROLES) };

static CPP: Grammar = Grammar {
    ask: refine::cpp,
    qualified_names: true,
    tests: TestForms { marks: &["TEST(", "TEST_F(", "TEST_CASE(", "SECTION("], method_prefix: None },
    ..grammar(Lang::Cpp, || tree_sitter_cpp::LANGUAGE.into(), CPP_ROLES)
};

/// JUnit 4 and 5, TestNG, Kotest's annotations.
const JVM_TEST_MARKS: &[&str] = &["@Test", "@ParameterizedTest", "@RepeatedTest", "@TestFactory", "@TestTemplate"];

static JAVA: Grammar = Grammar {
    tests: TestForms { marks: JVM_TEST_MARKS, method_prefix: None },
    ..grammar(
        Lang::Java,
        || tree_sitter_java::LANGUAGE.into(),
        &[
            ("class_declaration", Container(ChunkKind::Class)),
            ("record_declaration", Container(ChunkKind::Class)),
            ("interface_declaration", Container(ChunkKind::Interface)),
            ("annotation_type_declaration", Type(ChunkKind::Interface)),
            ("enum_declaration", Container(ChunkKind::Enum)),
            ("enum_body_declarations", Transparent),
            ("method_declaration", Function),
            ("constructor_declaration", Function),
            ("compact_constructor_declaration", Function),
            ("import_declaration", Import),
        ],
    )
};

static KOTLIN: Grammar = Grammar {
    ask: refine::kotlin,
    bodies: &["class_body", "enum_class_body", "function_body"],
    tests: TestForms { marks: JVM_TEST_MARKS, method_prefix: None },
    ..grammar(
        Lang::Kotlin,
        || tree_sitter_kotlin_ng::LANGUAGE.into(),
        &[
            ("class_declaration", Ask),
            ("object_declaration", Container(ChunkKind::Class)),
            ("companion_object", Container(ChunkKind::Class)),
            ("function_declaration", Function),
            ("secondary_constructor", Function),
            ("property_declaration", Ask),
            ("type_alias", Type(ChunkKind::Type)),
            ("import", Import),
        ],
    )
};

static CSHARP: Grammar = Grammar {
    ask: refine::csharp,
    tests: TestForms {
        // xUnit, NUnit, MSTest.
        marks: &["[Fact", "[Theory", "[Test", "[TestCase", "[TestMethod", "[DataTestMethod"],
        method_prefix: None,
    },
    ..grammar(
        Lang::CSharp,
        || tree_sitter_c_sharp::LANGUAGE.into(),
        &[
            ("class_declaration", Container(ChunkKind::Class)),
            ("record_declaration", Container(ChunkKind::Class)),
            ("struct_declaration", Container(ChunkKind::Struct)),
            ("interface_declaration", Container(ChunkKind::Interface)),
            ("enum_declaration", Type(ChunkKind::Enum)),
            ("namespace_declaration", Container(ChunkKind::Namespace)),
            ("file_scoped_namespace_declaration", Transparent),
            ("declaration_list", Transparent),
            ("method_declaration", Function),
            ("constructor_declaration", Function),
            ("destructor_declaration", Function),
            ("operator_declaration", Function),
            ("conversion_operator_declaration", Function),
            ("property_declaration", Ask),
            ("indexer_declaration", Ask),
            ("delegate_declaration", Type(ChunkKind::Type)),
            ("using_directive", Import),
        ],
    )
};

static RUBY: Grammar = Grammar {
    ask: refine::ruby,
    bodies: &["body_statement"],
    tests: TestForms { marks: &[], method_prefix: Some("test_") },
    ..grammar(
        Lang::Ruby,
        || tree_sitter_ruby::LANGUAGE.into(),
        &[
            ("class", Container(ChunkKind::Class)),
            ("singleton_class", Container(ChunkKind::Class)),
            ("module", Container(ChunkKind::Mod)),
            ("method", Function),
            ("singleton_method", Function),
            ("call", Ask),
        ],
    )
};

static PHP: Grammar = Grammar {
    ask: refine::php,
    tests: TestForms { marks: &["#[Test", "@test"], method_prefix: Some("test") },
    ..grammar(
        Lang::Php,
        || tree_sitter_php::LANGUAGE_PHP.into(),
        &[
            ("class_declaration", Container(ChunkKind::Class)),
            ("interface_declaration", Container(ChunkKind::Interface)),
            ("trait_declaration", Container(ChunkKind::Trait)),
            ("enum_declaration", Container(ChunkKind::Enum)),
            ("function_definition", Function),
            ("method_declaration", Function),
            ("namespace_definition", Ask),
            ("namespace_use_declaration", Import),
        ],
    )
};

static SWIFT: Grammar = Grammar {
    ask: refine::swift,
    tests: TestForms { marks: &["@Test"], method_prefix: Some("test") },
    ..grammar(
        Lang::Swift,
        || tree_sitter_swift::LANGUAGE.into(),
        &[
            ("class_declaration", Ask),
            ("protocol_declaration", Container(ChunkKind::Interface)),
            ("function_declaration", Function),
            ("protocol_function_declaration", Function),
            ("init_declaration", Function),
            ("deinit_declaration", Function),
            ("subscript_declaration", Function),
            ("property_declaration", Ask),
            ("typealias_declaration", Type(ChunkKind::Type)),
            ("import_declaration", Import),
        ],
    )
};

static SCALA: Grammar = Grammar {
    tests: TestForms { marks: JVM_TEST_MARKS, method_prefix: None },
    ..grammar(
        Lang::Scala,
        || tree_sitter_scala::LANGUAGE.into(),
        &[
            ("class_definition", Container(ChunkKind::Class)),
            ("object_definition", Container(ChunkKind::Class)),
            ("trait_definition", Container(ChunkKind::Trait)),
            ("enum_definition", Container(ChunkKind::Enum)),
            ("extension_definition", Container(ChunkKind::Impl)),
            ("function_definition", Function),
            ("function_declaration", Function),
            ("type_definition", Type(ChunkKind::Type)),
            ("import_declaration", Import),
            ("package_clause", Transparent),
            ("template_body", Transparent),
        ],
    )
};

static LUA: Grammar = Grammar {
    ask: refine::lua,
    bodies: &["block"],
    qualified_names: true,
    ..grammar(
        Lang::Lua,
        || tree_sitter_lua::LANGUAGE.into(),
        &[
            ("function_declaration", Function),
            ("variable_declaration", Ask),
            ("assignment_statement", Ask),
            ("function_call", Ask),
        ],
    )
};

static BASH: Grammar = grammar(Lang::Bash, || tree_sitter_bash::LANGUAGE.into(), &[("function_definition", Function)]);

static ELIXIR: Grammar = Grammar {
    ask: refine::elixir,
    bodies: &["do_block"],
    ..grammar(Lang::Elixir, || tree_sitter_elixir::LANGUAGE.into(), &[("call", Ask)])
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::lang::SPECS;

    #[test]
    fn every_grammar_loads() {
        for spec in SPECS {
            let Some(g) = of(spec.lang) else { continue };
            // Its roles by kind id are kept under its own language, not another's.
            assert_eq!(g.lang, spec.lang, "{}", spec.name);
            let mut p = tree_sitter::Parser::new();
            p.set_language(&(g.language)()).unwrap();
            assert!(p.parse("", None).is_some(), "{}", spec.name);
        }
    }

    /// A table names only node kinds its grammar has: a typo would silently find nothing.
    /// (JavaScript shares TypeScript's table, whose own kinds never occur in JavaScript.)
    #[test]
    fn every_table_names_kinds_of_its_grammar() {
        let typescript = (TYPESCRIPT.language)();
        for spec in SPECS {
            let Some(g) = of(spec.lang) else { continue };
            let language = (g.language)();
            for (kind, _) in g.roles {
                let known = |l: &Language| l.id_for_node_kind(kind, true) != 0;
                let shared = spec.lang == Lang::JavaScript && known(&typescript);
                assert!(known(&language) || shared, "{}: no node kind {kind}", spec.name);
            }
            for kind in g.bodies {
                assert!(language.id_for_node_kind(kind, true) != 0, "{}: no node kind {kind}", spec.name);
            }
        }
    }
}
