/**
 * @file Tree-sitter grammar for collc's .coll language (collective-communication schedules).
 *
 * grammar/coll.lalrpop is the authority; this grammar has the same items, statements and
 * expression levels, and src/syntax/lexer.rs's tokens. Differences, all on invalid input:
 *  - comparisons and ranges are left-associative here; collc rejects `a < b < c` and `a..b..c`;
 *  - a quantity's unit may follow its number after a line break or a comment here; collc's
 *    lexer wants them on one line (`300 GB/s`, `25Gbps`).
 * @license MIT OR Apache-2.0
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

const PREC = {
  or: 1,
  and: 2,
  compare: 3,
  range: 4,
  sum: 5,
  product: 6,
  unary: 7,
  postfix: 8,
};

/** Zero or more `rule`s separated by commas, with an optional trailing comma (lalrpop's Comma<T>). */
function commaSep(rule) {
  return optional(seq(rule, repeat(seq(',', rule)), optional(',')));
}

module.exports = grammar({
  name: 'coll',

  extras: $ => [/\s/, $.comment],

  word: $ => $.identifier,

  rules: {
    source_file: $ => repeat($._item),

    _item: $ => choice(
      $.import_declaration,
      $.param_declaration,
      $.let_declaration,
      $.generator_definition,
      $.topology_definition,
      $.collective_declaration,
      $.schedule_declaration,
      $.model_declaration,
      $.target_declaration,
    ),

    // import ring;  import "lib/boxes.coll";
    import_declaration: $ => seq(
      'import',
      field('path', choice($.identifier, $.string)),
      ';',
    ),

    // param n: int = 8;
    param_declaration: $ => seq(
      'param',
      field('name', $.identifier),
      optional(seq(':', field('type', $.type))),
      '=',
      field('value', $._expression),
      ';',
    ),

    // let x = 3;  (an item, and a statement inside blocks)
    let_declaration: $ => seq(
      'let',
      field('name', $.identifier),
      '=',
      field('value', $._expression),
      ';',
    ),

    // generator ring(n: int, bw: bandwidth, lat: time = 0 ns) { ... }
    generator_definition: $ => seq(
      'generator',
      field('name', $.identifier),
      field('parameters', $.parameter_list),
      field('body', $.block),
    ),

    parameter_list: $ => seq('(', commaSep($.parameter), ')'),

    parameter: $ => seq(
      field('name', $.identifier),
      optional(seq(':', field('type', $.type))),
      optional(seq('=', field('default', $._expression))),
    ),

    type: $ => $.identifier,

    // topology t { ... }  or  topology t = ring(n: 8, bw: 25 GB/s);
    topology_definition: $ => seq(
      'topology',
      field('name', $.identifier),
      choice(
        field('body', $.block),
        seq('=', field('value', $.call_expression), ';'),
      ),
    ),

    // collective allreduce { size: 1 MiB; }  or  collective barrier;
    collective_declaration: $ => seq(
      'collective',
      field('kind', $.identifier),
      $._properties,
    ),

    // schedule ring;  schedule auto;  schedule forest { k: auto; }
    schedule_declaration: $ => seq(
      'schedule',
      field('family', choice($.identifier, $.auto)),
      $._properties,
    ),

    // model aries: pipelining_postal { alpha_p: 500 ns; ... }
    model_declaration: $ => seq(
      'model',
      field('name', $.identifier),
      ':',
      field('kind', $.identifier),
      $._properties,
    ),

    // target msccl { proto: ll128; }  or  target mpi;
    target_declaration: $ => seq(
      'target',
      field('kind', $.identifier),
      $._properties,
    ),

    _properties: $ => choice(';', field('properties', $.property_block)),

    property_block: $ => seq('{', repeat($.property), '}'),

    // `model` is a keyword but also a property name (`model: aries;`).
    property: $ => seq(
      field('key', choice($.identifier, alias('model', $.identifier))),
      ':',
      field('value', $._expression),
      ';',
    ),

    block: $ => seq('{', repeat($._statement), '}'),

    _statement: $ => choice(
      $.node_declaration,
      $.link_statement,
      $.for_statement,
      $.if_statement,
      $.let_declaration,
      $.use_statement,
    ),

    // compute gpu[2][8];  switch spine;
    node_declaration: $ => seq(
      field('kind', choice('compute', 'switch')),
      field('name', $.identifier),
      repeat(field('dimension', $.dimension)),
      ';',
    ),

    dimension: $ => seq('[', $._expression, ']'),

    // link a[i] <-> b : 25 GB/s, latency 1 us, parallel 2;
    link_statement: $ => seq(
      'link',
      field('from', $._postfix),
      field('direction', choice('<->', '->')),
      field('to', $._postfix),
      ':',
      field('bandwidth', $._expression),
      repeat(seq(',', field('attribute', $.link_attribute))),
      ';',
    ),

    link_attribute: $ => seq(
      field('name', $.identifier),
      field('value', $._expression),
    ),

    for_statement: $ => seq(
      'for',
      field('variable', $.identifier),
      'in',
      field('iterable', $._expression),
      field('body', $.block),
    ),

    if_statement: $ => seq(
      'if',
      field('condition', $._expression),
      field('consequence', $.block),
      optional(seq('else', field('alternative', choice($.block, $.if_statement)))),
    ),

    // use full_mesh(n: 4, bw: 100 GB/s) as box[b];
    use_statement: $ => seq(
      'use',
      field('call', $.call_expression),
      'as',
      field('alias', $._postfix),
      ';',
    ),

    // Expressions, loosest first: || && comparisons .. + - * / % unary postfix.
    _expression: $ => choice(
      $.binary_expression,
      $.range_expression,
      $.unary_expression,
      $._postfix,
    ),

    binary_expression: $ => choice(
      ...[
        ['||', PREC.or],
        ['&&', PREC.and],
        ['==', PREC.compare],
        ['!=', PREC.compare],
        ['<', PREC.compare],
        ['<=', PREC.compare],
        ['>', PREC.compare],
        ['>=', PREC.compare],
        ['+', PREC.sum],
        ['-', PREC.sum],
        ['*', PREC.product],
        ['/', PREC.product],
        ['%', PREC.product],
      ].map(([op, p]) => prec.left(p, seq(
        field('left', $._expression),
        field('operator', op),
        field('right', $._expression),
      ))),
    ),

    range_expression: $ => prec.left(PREC.range, seq(
      field('start', $._expression),
      '..',
      field('end', $._expression),
    )),

    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('-', '!')),
      field('operand', $._expression),
    )),

    // Postfix expressions: also the form of link endpoints and `use ... as` names.
    _postfix: $ => choice(
      $.index_expression,
      $.field_expression,
      $._atom,
    ),

    index_expression: $ => prec(PREC.postfix, seq(
      field('object', $._postfix),
      '[',
      field('index', $._expression),
      ']',
    )),

    field_expression: $ => prec(PREC.postfix, seq(
      field('object', $._postfix),
      '.',
      field('field', $.identifier),
    )),

    _atom: $ => choice(
      $.integer,
      $.decimal,
      $.quantity,
      $.string,
      $.boolean,
      $.auto,
      $.identifier,
      $.call_expression,
      $.list,
      $.parenthesized_expression,
    ),

    call_expression: $ => seq(
      field('function', $.identifier),
      field('arguments', $.argument_list),
    ),

    argument_list: $ => seq('(', commaSep(choice($.named_argument, $._expression)), ')'),

    named_argument: $ => seq(
      field('name', $.identifier),
      ':',
      field('value', $._expression),
    ),

    list: $ => seq('[', commaSep($._expression), ']'),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    // A number and its unit: 300 GB/s, 25Gbps, 0.4 ns/B. The unit is an identifier, optionally
    // `/identifier`: `10 GB/n` is the unit GB/n (write `10 GB / n` to divide).
    quantity: $ => seq(
      field('value', choice($.integer, $.decimal)),
      field('unit', $.unit),
    ),

    unit: _ => /[A-Za-z][A-Za-z0-9_]*(\/[A-Za-z][A-Za-z0-9_]*)?/,

    integer: _ => /[0-9][0-9_]*/,

    decimal: _ => /[0-9][0-9_]*\.[0-9][0-9_]*/,

    string: $ => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence)),
      token.immediate('"'),
    ),

    string_content: _ => token.immediate(prec(1, /[^"\\\n]+/)),

    escape_sequence: _ => token.immediate(/\\./),

    boolean: _ => choice('true', 'false'),

    auto: _ => 'auto',

    identifier: _ => /[A-Za-z_][A-Za-z0-9_]*/,

    comment: _ => token(seq('//', /[^\n]*/)),
  },
});
