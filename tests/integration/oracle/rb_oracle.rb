# The Ruby oracle of tests/integration/test_infer_oracle.py: Ripper (Ruby's own parser) reports each source's
# top-level methods (`def f`, `def self.f`, endless `def f(a) = a`: the program's own statements) and their
# parameters as fnbox's scanner names them (ruby_infer.c): a destructuring `(a, b)` is `$<index>`, a bare
# `*` / `**` keep those names, `...` is a `...` rest and a `...` keyword rest, a block parameter and `**nil`
# take no argument and are left out.
#
# stdin:  {"sources": [code, ...], "exprs": [text, ...]}
# stdout: {"ruby": version, "sources": [[{name, async, params: [{name, kind, default}]}] | {error}],
#          "exprs": [sexp | {error}]}
# A default is its S-expression without positions (a method call without receiver or arguments and a local
# variable read alike, which is what the same word is outside the method); "exprs" are the scanner's
# default texts parsed the same way.
require 'json'
require 'ripper'

def strip(node)
  return node unless node.is_a?(Array)
  if node[0].is_a?(Symbol) && node[0].to_s.start_with?('@')
    return [node[0].to_s, node[1]]                  # a token: [:@int, "1", [line, column]] -> ["@int", "1"]
  end
  node = node.map { |x| strip(x) }
  node[0] = :var_ref if node[0] == :vcall
  node.map { |x| x.is_a?(Symbol) ? x.to_s : x }
end

def params_of(node)
  node = node[1] if node.is_a?(Array) && node[0] == :paren
  return [] unless node.is_a?(Array) && node[0] == :params
  pre, opt, rest, post, kw, kwrest, _block = node[1..7]
  out = []
  add = ->(name, kind, default = nil) { out << { name: name, kind: kind, default: default } }
  positional = lambda do |p|
    p[0] == :mlhs ? add.call("$#{out.size}", 'positional') : add.call(p[1], 'positional')
  end
  (pre || []).each(&positional)
  (opt || []).each { |name, default| add.call(name[1], 'positional', strip(default)) }
  forward = [rest, kwrest].any? { |x| x.is_a?(Array) && x[0] == :args_forward }
  if rest.is_a?(Array) && rest[0] == :rest_param
    add.call(rest[1] ? rest[1][1] : '*', 'var_positional')
  end
  (post || []).each(&positional)
  (kw || []).each { |label, default| add.call(label[1].chomp(':'), 'keyword_only', default ? strip(default) : nil) }
  if forward
    add.call('...', 'var_positional')
    add.call('...', 'var_keyword')
  elsif kwrest.is_a?(Array) && kwrest[0] == :kwrest_param
    add.call(kwrest[1] ? kwrest[1][1] : '**', 'var_keyword')
  end
  out
end

def top_level(code)
  tree = Ripper.sexp(code)
  return { error: 'Ripper: syntax error' } unless tree
  tree[1].filter_map do |stmt|
    case stmt[0]
    when :def then { name: stmt[1][1], async: false, params: params_of(stmt[2]) }
    when :defs then { name: stmt[3][1], async: false, params: params_of(stmt[4]) }
    end
  end
end

def expr(text)
  tree = Ripper.sexp(text)
  return { error: 'Ripper: syntax error' } unless tree
  return { error: "#{tree[1].size} statements" } unless tree[1].size == 1
  strip(tree[1][0])
end

input = JSON.parse($stdin.read)
print JSON.generate({ ruby: RUBY_VERSION,
                      sources: input['sources'].map { |c| top_level(c) },
                      exprs: input['exprs'].map { |t| expr(t) } })
