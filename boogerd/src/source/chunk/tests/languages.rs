//! A fixture per language → the expected outline (`kind name [parent] L<start>-<end> | signature`).

use std::path::Path;

use super::{check, line};
use crate::source::chunk::chunk_file;

#[test]
fn rust() {
    check(
        "sample.rs",
        include_str!("../fixtures/sample.rs"),
        &[
            "block  L1-1 | ",
            "import std::collections::HashMap L2-2 | use std::collections::HashMap;",
            "import std::io::{self, Read} L3-3 | use std::io::{self, Read};",
            "struct Config L5-9 | pub struct Config",
            "enum Mode L11-11 | pub enum Mode",
            "impl Config L13-13 | impl Config",
            "method new [Config] L14-17 | pub fn new(name: &str) -> Self",
            "method parse_config [Config] L19-21 | fn parse_config(input: &str) -> io::Result<Self>",
            "gap  L22-22 | ",
            "impl Config (std::fmt::Display) L24-24 | impl std::fmt::Display for Config",
            "method fmt [Config] L25-27 | fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result",
            "gap  L28-28 | ",
            "trait Loader L30-30 | pub trait Loader",
            "method load [Loader] L31-31 | fn load(&self) -> Config;",
            "gap  L32-32 | ",
            "const LIMIT L34-34 | const LIMIT: usize = 10;",
            "macro square L36-36 | macro_rules! square",
            "mod inner L38-38 | mod inner",
            "function helper [inner] L39-39 | pub fn helper()",
            "gap  L40-40 | ",
            "function main L42-45 | fn main()",
        ],
    );
}

#[test]
fn python() {
    check(
        "sample.py",
        include_str!("../fixtures/sample.py"),
        &[
            "block  L1-1 | ",
            "import os L2-2 | import os",
            "import collections import OrderedDict as OD L3-3 | from collections import OrderedDict as OD",
            "block  L5-5 | ",
            "function which L8-10 | def which(cmd, mode=os.F_OK | os.X_OK, path=None)",
            "class Cache L13-17 | class Cache(OD)",
            "method __init__ [Cache] L18-19 | def __init__(self, size)",
            "method full [Cache] L21-23 | @property def full(self) -> bool",
            "method fetch [Cache] L25-26 | async def fetch(self, key)",
            "block  L29-30 | ",
        ],
    );
}

#[test]
fn typescript() {
    check(
        "sample.ts",
        include_str!("../fixtures/sample.ts"),
        &[
            "import { readFile } from \"fs\" L1-1 | import { readFile } from \"fs\";",
            "import path L2-2 | const path = require(\"path\");",
            "interface User L4-7 | export interface User",
            "type Id L9-9 | export type Id = string | number;",
            "enum Color L11-11 | enum Color",
            "class UserStore L13-15 | export class UserStore",
            "method add [UserStore] L16-18 | add(user: User): void",
            "method find [UserStore] L20-22 | find(id: Id): User | undefined",
            "gap  L23-23 | ",
            "function greet L25-27 | export function greet(user: User): string",
            "function shout L29-29 | const shout = (s: string) => s.toUpperCase();",
            "function main L31-31 | export default function main()",
        ],
    );
}

/// A function behind a cast or in parentheses is still the variable's function.
#[test]
fn typescript_functions_behind_a_cast() {
    let src = "export const make = ((n: number) => n + 1) as Maker;\nconst g = (function () { return 1; }) satisfies G;\nconst table = [1, 2] as const;\n";
    check(
        "cast.ts",
        src,
        &[
            "function make L1-1 | export const make = ((n: number) => n + 1) as Maker;",
            "function g L2-2 | const g = (function ()",
            "block  L3-3 | ",
        ],
    );
}

#[test]
fn tsx_and_javascript_share_the_rules() {
    let src = "import React from 'react';\nexport function App() { return <div>hi</div>; }\nclass A { m() {} }\n";
    check(
        "app.tsx",
        src,
        &[
            "import React from 'react' L1-1 | import React from 'react';",
            "function App L2-2 | export function App()",
            "class A L3-3 | class A",
            "method m [A] L3-3 | m()",
        ],
    );
    let js = "const fs = require('fs');\nfunction go(a) { return a; }\nconst f = function () {};\n";
    check(
        "x.js",
        js,
        &[
            "import fs L1-1 | const fs = require('fs');",
            "function go L2-2 | function go(a)",
            "function f L3-3 | const f = function ()",
        ],
    );
}

/// Test-runner calls are `test` chunks named by their descriptions; a suite's cases (and
/// helpers) are its members. Calls that are not a runner's, or have no description and
/// function, stay top-level code.
#[test]
fn test_runner_calls_are_named_tests() {
    let src = "\
import { describe, it } from 'vitest'

describe('persist (async)', () => {
  const storage = makeStorage()

  it('can rehydrate state', async () => {
    await rehydrate()
  })

  function helper() {}

  describe.each([1, 2])('with %i items', (n) => {
    test.skip(`drops ${n} updates`, () => {})
  })
})

test('says \"hi\"', function () {})
it(name, () => {})
expect(it('not a case')).toBe(1)
";
    check(
        "tests/persist.test.ts",
        src,
        &[
            "import { describe, it } from 'vitest' L1-1 | import { describe, it } from 'vitest'",
            "test persist (async) L3-5 | describe('persist (async)', () =>",
            "test can rehydrate state [persist (async)] L6-8 | it('can rehydrate state', async () =>",
            "function helper [persist (async)] L10-10 | function helper()",
            "test with %i items [persist (async)] L12-12 | describe.each([1, 2])('with %i items', (n) =>",
            "test drops ${n} updates [with %i items] L13-13 | test.skip(`drops ${n} updates`, () =>",
            "gap  L14-15 | ",
            "test says \"hi\" L17-17 | test('says \"hi\"', function ()",
            "block  L18-19 | ",
        ],
    );
}

#[test]
fn go() {
    check(
        "sample.go",
        include_str!("../fixtures/sample.go"),
        &[
            "block  L1-1 | ",
            "import ( \"fmt\" \"os\" ) L3-6 | import ( \"fmt\" \"os\" )",
            "struct Server L8-11 | type Server struct",
            "interface Handler L13-15 | type Handler interface",
            "function NewServer L17-20 | func NewServer(addr string) *Server",
            "method Start [Server] L22-25 | func (s *Server) Start() error",
            "block  L27-27 | ",
        ],
    );
}

#[test]
fn c() {
    check(
        "sample.c",
        include_str!("../fixtures/sample.c"),
        &[
            "block  L1-1 | ",
            "macro SAMPLE_H L2-2 | #define SAMPLE_H",
            "import <stdio.h> L3-3 | #include <stdio.h>",
            "import \"local.h\" L4-4 | #include \"local.h\"",
            "macro MAX L6-6 | #define MAX(a, b) ((a) > (b) ? (a) : (b))",
            "struct point L8-11 | struct point",
            "typedef size_t2 L13-13 | typedef struct",
            "enum color L15-15 | enum color",
            "declaration area L17-17 | int area(const struct point *p, int n);",
            "function add L19-21 | static int add(int a, int b)",
            "declaration callback L23-23 | int (*callback)(int);",
            "block  L24-24 | ",
        ],
    );
}

#[test]
fn java() {
    check(
        "sample.java",
        include_str!("../fixtures/sample.java"),
        &[
            "block  L1-1 | ",
            "import java.util.List L3-3 | import java.util.List;",
            "class Parser L5-8 | public class Parser implements Reader",
            "method Parser [Parser] L9-11 | public Parser(int depth)",
            "method parse [Parser] L13-15 | public Document parse(String html)",
            "enum Mode [Parser] L17-17 | enum Mode",
            "method strict [Mode] L17-17 | boolean strict()",
            "gap  L18-18 | ",
            "interface Reader L20-20 | interface Reader",
            "method parse [Reader] L21-21 | Document parse(String html);",
            "gap  L22-22 | ",
            "class Point L24-24 | record Point(int x, int y)",
            "class ParserTest L26-26 | class ParserTest",
            "test parsesEmptyDocument [ParserTest] L27-30 | @Test void parsesEmptyDocument()",
            "gap  L31-31 | ",
        ],
    );
}

#[test]
fn kotlin() {
    check(
        "sample.kt",
        include_str!("../fixtures/sample.kt"),
        &[
            "block  L1-1 | ",
            "import android.util.Log L3-3 | import android.util.Log",
            "class Timber L5-6 | class Timber private constructor()",
            "property count [Timber] L7-8 | val count: Int get()",
            "method plant [Timber] L10-12 | fun plant(tree: Tree)",
            "class Forest [Timber] L14-14 | companion object Forest",
            "method uproot [Forest] L15-15 | fun uproot(tree: Tree)",
            "gap  L16-17 | ",
            "interface Tree L19-19 | interface Tree",
            "method log [Tree] L20-20 | fun log(message: String)",
            "gap  L21-21 | ",
            "enum Level L23-23 | enum class Level",
            "class Registry L25-25 | object Registry",
            "method clear [Registry] L26-26 | fun clear()",
            "gap  L27-27 | ",
            "function topLevel L29-29 | fun topLevel(x: Int): Int",
            "class TimberTest L31-31 | class TimberTest",
            "test plantAddsATree [TimberTest] L32-34 | @Test fun plantAddsATree()",
            "gap  L35-35 | ",
        ],
    );
}

#[test]
fn csharp() {
    check(
        "sample.cs",
        include_str!("../fixtures/sample.cs"),
        &[
            "import System L1-1 | using System;",
            "import System.Collections.Generic L2-2 | using System.Collections.Generic;",
            "namespace FluentValidation L4-4 | namespace FluentValidation",
            "class AbstractValidator [FluentValidation] L5-8 | public abstract class AbstractValidator<T> : IValidator<T>",
            "property Mode [AbstractValidator] L9-12 | public CascadeMode Mode",
            "method AbstractValidator [AbstractValidator] L14-14 | public AbstractValidator()",
            "method Validate [AbstractValidator] L16-18 | public ValidationResult Validate(T instance)",
            "gap  L19-19 | ",
            "interface IValidator [FluentValidation] L21-21 | public interface IValidator<T>",
            "method Validate [IValidator] L22-22 | ValidationResult Validate(T instance);",
            "gap  L23-23 | ",
            "enum CascadeMode [FluentValidation] L25-25 | public enum CascadeMode",
            "struct Range [FluentValidation] L27-27 | public struct Range",
            "class ValidatorTests [FluentValidation] L29-29 | public class ValidatorTests",
            "test Validates_an_empty_instance [ValidatorTests] L30-33 | [Fact] public void Validates_an_empty_instance()",
            "gap  L34-35 | ",
        ],
    );
}

#[test]
fn cpp() {
    check(
        "sample.cpp",
        include_str!("../fixtures/sample.cpp"),
        &[
            "import <string> L1-1 | #include <string>",
            r#"import "App.hpp" L2-2 | #include "App.hpp""#,
            "namespace CLI L4-5 | namespace CLI",
            "class App [CLI] L6-8 | class App",
            "declaration App [App] L9-9 | App(std::string description);",
            "method parse [App] L11-13 | int parse(int argc, char **argv)",
            "declaration get [App] L15-15 | template <typename T> T get() const;",
            "gap  L16-16 | ",
            "struct Option [CLI] L18-20 | struct Option",
            "method run [App] L22-24 | int App::run()",
            "function max_of [CLI] L26-28 | template <typename T> T max_of(T a, T b)",
            "type App_p [CLI] L30-30 | using App_p = std::shared_ptr<App>;",
            "block  L32-32 | ",
        ],
    );
}

#[test]
fn ruby() {
    check(
        "sample.rb",
        include_str!("../fixtures/sample.rb"),
        &[
            "import 'net/http' L1-1 | require 'net/http'",
            "import 'httparty/request' L2-2 | require_relative 'httparty/request'",
            "mod HTTParty L4-5 | module HTTParty",
            "function get [HTTParty] L6-8 | def self.get(path, options = {})",
            "class Request [HTTParty] L10-12 | class Request < Base",
            "method initialize [Request] L13-15 | def initialize(path)",
            "method perform [Request] L17-19 | def perform",
            "block  L20-21 | ",
            "test HTTParty::Request L23-23 | describe HTTParty::Request",
            r#"test with a path [HTTParty::Request] L24-24 | context "with a path""#,
            r#"test performs the request [with a path] L25-27 | it "performs the request""#,
            "block  L28-29 | ",
            "class RequestTest L31-31 | class RequestTest < Minitest::Test",
            "test test_perform [RequestTest] L32-34 | def test_perform",
            "block  L35-35 | ",
        ],
    );
}

#[test]
fn php() {
    check(
        "sample.php",
        include_str!("../fixtures/sample.php"),
        &[
            "block  L1-5 | ",
            r#"import Psr\Container\ContainerInterface L7-7 | use Psr\Container\ContainerInterface;"#,
            "import function strtoupper L8-8 | use function strtoupper;",
            "class App L10-14 | class App extends RouteCollectorProxy implements RequestHandlerInterface",
            "method __construct [App] L15-18 | public function __construct(ContainerInterface $container)",
            "method run [App] L20-23 | public function run(?ServerRequestInterface $request = null): void",
            "gap  L24-24 | ",
            "interface RequestHandlerInterface L26-27 | interface RequestHandlerInterface",
            "method handle [RequestHandlerInterface] L28-28 | public function handle($request);",
            "gap  L29-29 | ",
            "trait Macroable L31-32 | trait Macroable",
            "method macro [Macroable] L33-33 | public function macro($name)",
            "gap  L34-34 | ",
            "function helper L36-39 | function helper($x)",
            "class AppTest L41-42 | class AppTest extends TestCase",
            "test testRunHandlesTheRequest [AppTest] L43-46 | public function testRunHandlesTheRequest(): void",
            "gap  L47-47 | ",
        ],
    );
}

#[test]
fn swift() {
    check(
        "sample.swift",
        include_str!("../fixtures/sample.swift"),
        &[
            "import Foundation L1-1 | import Foundation",
            "struct JSON L3-4 | public struct JSON",
            "property object [JSON] L5-7 | public var object: Any",
            "block  L9-9 | ",
            "method init [JSON] L11-13 | public init(data: Data) throws",
            "method rawData [JSON] L15-17 | public func rawData() throws -> Data",
            "gap  L18-18 | ",
            "impl JSON L20-20 | extension JSON: Collection",
            "method subscript [JSON] L21-21 | public subscript(position: Int) -> JSON",
            "gap  L22-22 | ",
            "enum SwiftyJSONError L24-26 | public enum SwiftyJSONError: Int",
            "interface JSONSubscriptType L28-30 | public protocol JSONSubscriptType",
            "class ArrayTests L32-32 | class ArrayTests: XCTestCase",
            "test testSingleDimensionalArraysGetter [ArrayTests] L33-35 | func testSingleDimensionalArraysGetter()",
            "gap  L36-36 | ",
        ],
    );
}

#[test]
fn scala() {
    check(
        "sample.scala",
        include_str!("../fixtures/sample.scala"),
        &[
            "block  L1-1 | ",
            "import scala.collection.mutable L3-3 | import scala.collection.mutable",
            "class Parser L5-6 | class Parser(depth: Int) extends Reader",
            "method parse [Parser] L7-7 | def parse(text: String): Doc",
            "gap  L8-8 | ",
            "trait Reader L10-10 | trait Reader",
            "method parse [Reader] L11-11 | def parse(text: String): Doc",
            "gap  L12-12 | ",
            "class Parser L14-14 | object Parser",
            "method apply [Parser] L15-15 | def apply(): Parser",
            "gap  L16-16 | ",
            "class Doc L18-18 | case class Doc(text: String)",
        ],
    );
}

#[test]
fn lua() {
    check(
        "sample.lua",
        include_str!("../fixtures/sample.lua"),
        &[
            r#"import json L1-1 | local json = require("json")"#,
            "block  L3-3 | ",
            "method encode [M] L5-8 | function M.encode(value)",
            "method decode [M] L10-12 | function M:decode(text)",
            "function helper L14-16 | local function helper(x)",
            r#"test encode L18-18 | describe("encode", function()"#,
            r#"test encodes a table [encode] L19-21 | it("encodes a table", function()"#,
            "block  L22-24 | ",
        ],
    );
}

#[test]
fn bash() {
    check(
        "sample.sh",
        include_str!("../fixtures/sample.sh"),
        &[
            "block  L1-2 | ",
            "function usage L4-7 | usage()",
            "function build L9-11 | function build",
            "block  L13-13 | ",
        ],
    );
}

#[test]
fn elixir() {
    check(
        "sample.ex",
        include_str!("../fixtures/sample.ex"),
        &[
            "mod Plug.Router L1-5 | defmodule Plug.Router",
            "import Plug.Conn [Plug.Router] L3-3 | alias Plug.Conn",
            "import Plug.Builder [Plug.Router] L4-4 | import Plug.Builder",
            "function match [Plug.Router] L6-9 | def match(conn, path) when is_binary(path)",
            "function normalize [Plug.Router] L11-11 | defp normalize(path), do: String.trim(path)",
            "function get [Plug.Router] L13-15 | defmacro get(path, do: block)",
            "block  L16-16 | ",
            "mod Plug.RouterTest L18-20 | defmodule Plug.RouterTest",
            "import ExUnit.Case [Plug.RouterTest] L19-19 | use ExUnit.Case",
            r#"test match/2 [Plug.RouterTest] L21-21 | describe "match/2""#,
            r#"test assigns the path [match/2] L22-24 | test "assigns the path""#,
            "block  L25-26 | ",
        ],
    );
}

/// GoogleTest's and Catch2's test macros are tests named by their arguments, their blocks in
/// them; the parser reads a `TEST_CASE(…) {` without a `;` as a syntax error, which the
/// index report says.
#[test]
fn cpp_test_macros_are_tests() {
    let src = "TEST(AppTest, ParsesNothing) {\n    EXPECT_EQ(0, run());\n}\n\nTEST_CASE_METHOD(TApp, \"OneFlagShort\", \"[app]\") {\n    CHECK(app.count(\"-c\") == 1u);\n}\n";
    let chunked = chunk_file(Path::new("tests/AppTest.cpp"), src.as_bytes(), false);
    let got: Vec<String> = chunked.chunks.iter().map(line).collect();
    assert_eq!(
        got,
        [
            "test AppTest.ParsesNothing L1-3 | TEST(AppTest, ParsesNothing)",
            r#"test OneFlagShort L5-7 | TEST_CASE_METHOD(TApp, "OneFlagShort", "[app]")"#,
        ],
        "{got:#?}"
    );
}
