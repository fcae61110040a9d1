/**
 * `roster completions bash|zsh|fish|powershell`: completion scripts generated from the command table
 * (commands, flags, flag values), so they can never offer what the parser would reject.
 * Each generator is pure: a model of the table in, a script out.
 *
 * Over 400 lines: the bash, zsh, fish and PowerShell generators read the one table the same way, side by
 * side so a change to what is completed reaches all four shells.
 */
import { psQuote, shQuote } from "./quote.ts";
import { SCHEMAS } from "./schemas.ts";
import { COMMANDS, type CommandSpec, type FlagSpec, GLOBAL_FLAGS, SHELLS } from "./spec.ts";

/** What a flag's value completes to. */
type ValueKind =
  | { kind: "none" }
  | { kind: "dirs" }
  | { kind: "files" }
  | { kind: "words"; words: readonly string[] };

interface FlagModel {
  name: string;
  short?: string;
  help: string;
  /** Absent for a boolean flag. */
  value?: ValueKind;
}

interface CommandModel {
  name: string;
  summary: string;
  /** The command's own flags (the global ones apply too). */
  flags: FlagModel[];
  /** Words each positional argument completes to, by position (none when empty). */
  positionals: readonly (readonly string[])[];
}

interface Model {
  commands: CommandModel[];
  globals: FlagModel[];
}

/** The shells there is a generator for; also what `completions SHELL` completes to. */
export { SHELLS };
export type Shell = typeof SHELLS[number];

/** Only plain words go into a script unquoted; anything else is a bug in the table. */
const WORD = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function word(w: string): string {
  if (!WORD.test(w)) throw new Error(`Not a plain word for a completion script: ${w}`);
  return w;
}

function valueKind(f: FlagSpec): ValueKind | undefined {
  if (f.value === undefined) return undefined;
  if (f.choices) return { kind: "words", words: f.choices.map(word) };
  if (f.value === "DIR") return { kind: "dirs" };
  if (f.value === "FILE") return { kind: "files" };
  return { kind: "none" };
}

function flagModel(f: FlagSpec): FlagModel {
  return {
    name: word(f.name),
    ...(f.short ? { short: word(f.short) } : {}),
    help: f.help,
    ...(f.value !== undefined ? { value: valueKind(f) } : {}),
  };
}

/**
 * The words of each position: the table's `each`, or its `choices` for the first; `schema NAME`
 * takes a schema's name and `help COMMAND` a command's (both known only here, off the hot path).
 */
function positionalWords(
  c: CommandSpec,
  commands: readonly CommandSpec[],
): readonly (readonly string[])[] {
  const p = c.positionals;
  if (p === undefined) return [];
  if (p.each) return p.each.map((ws) => ws.map(word));
  if (p.choices) return [p.choices.map(word)];
  if (c.name === "schema") return [Object.keys(SCHEMAS).map(word)];
  if (c.name === "help") return [commands.map((x) => word(x.name))];
  return [];
}

/** Pure: the part of the command table that completion needs. */
export function buildModel(
  commands: readonly CommandSpec[] = COMMANDS,
  globals: readonly FlagSpec[] = GLOBAL_FLAGS,
): Model {
  const g = globals.map(flagModel);
  return {
    globals: g,
    commands: commands.map((c) => ({
      name: word(c.name),
      summary: c.summary,
      flags: c.flags.map(flagModel),
      positionals: positionalWords(c, commands),
    })),
  };
}

const valueFlags = (flags: FlagModel[]) => flags.filter((f) => f.value !== undefined);

// ---- bash ---------------------------------------------------------------------------------

/** The bash statement that completes a flag's value into COMPREPLY. */
function bashValue(v: ValueKind): string {
  switch (v.kind) {
    case "words":
      return `COMPREPLY=($(compgen -W "${v.words.join(" ")}" -- "$cur"))`;
    case "dirs":
      return `compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$cur")`;
    case "files":
      return `compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$cur")`;
    default:
      return "COMPREPLY=()";
  }
}

/**
 * The bash loop over COMP_WORDS (`start`: its first step) up to the word under the cursor:
 * it steps over the flags in `values` with their value (`--flag value`, or `--flag = value`,
 * three words when = is in COMP_WORDBREAKS) and over other flags, and runs `word` on the rest.
 */
function bashWords(start: string, values: string[], word: string): string {
  return `  for ((${start}; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    case $w in
      ${values.length > 0 ? values.join("|") : "--"})
        if [[ \${COMP_WORDS[i+1]} == = ]]; then ((i += 2)); else ((i++)); fi ;;
      -*|=) ;;
      *) ${word} ;;
    esac
  done`;
}

function bashScript(m: Model): string {
  const globalValues = valueFlags(m.globals).map((f) => `--${f.name}`);
  const valueCases = [
    ...m.commands.flatMap((c) =>
      valueFlags(c.flags).map((f) =>
        `    "${c.name} --${f.name}") ${bashValue(f.value!)}; return ;;`
      )
    ),
    ...valueFlags(m.globals).map((f) => `    *" --${f.name}") ${bashValue(f.value!)}; return ;;`),
  ];
  const globalNames = m.globals.map((f) => `--${f.name}`);
  const flagCases = m.commands.map((c) =>
    `      ${c.name}) COMPREPLY=($(compgen -W "${
      [...c.flags.map((f) => `--${f.name}`), ...globalNames].join(" ")
    }" -- "$cur")) ;;`
  );
  const positionalCases = m.commands.flatMap((c) =>
    c.positionals.map((ws, k) =>
      `    "${c.name} ${k}") COMPREPLY=($(compgen -W "${ws.join(" ")}" -- "$cur")) ;;`
    )
  );
  const allValues = [
    ...new Set(
      m.commands.flatMap((c) => valueFlags(c.flags)).map((f) => `--${f.name}`).concat(globalValues),
    ),
  ];
  return `# bash completion for roster. Generated by 'roster completions bash': do not edit.
# Load it with: source <(roster completions bash)
_roster() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev= cmd= i w
  ((COMP_CWORD > 0)) && prev=\${COMP_WORDS[COMP_CWORD-1]}
  # --flag=value arrives as three words when = is in COMP_WORDBREAKS.
  if [[ $cur == = ]]; then
    cur=
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=\${COMP_WORDS[COMP_CWORD-2]}
  fi
  # The command: the first word that is neither a flag nor a global flag's value.
${bashWords("i = 1", globalValues, "cmd=$w; break")}
  # Which positional the word under the cursor is: the words after the command that are
  # neither flags nor a flag's value.
  local n=0
${bashWords("i++", allValues, "((n++))")}
  case "$cmd $prev" in
${valueCases.join("\n")}
  esac
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "${globalNames.join(" ")}" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "${m.commands.map((c) => c.name).join(" ")}" -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
${flagCases.join("\n")}
    esac
    return
  fi
  case "$cmd $n" in
${positionalCases.join("\n")}
  esac
}
complete -F _roster roster
`;
}

// ---- zsh ----------------------------------------------------------------------------------

/** `name:description` for _describe, with colons in the name escaped. */
function described(name: string, help: string): string {
  return shQuote(`${name.replaceAll(":", "\\:")}:${help}`);
}

function zshScript(m: Model): string {
  const globalValues = valueFlags(m.globals).map((f) => `--${f.name}`);
  const valueCases: string[] = [];
  const action = (v: ValueKind, what: string) =>
    v.kind === "words"
      ? `compadd -- ${v.words.join(" ")}`
      : v.kind === "dirs"
      ? "_files -/"
      : v.kind === "files"
      ? "_files"
      : `_message ${shQuote(what)}`;
  for (const c of m.commands) {
    for (const f of valueFlags(c.flags)) {
      valueCases.push(
        `    (${shQuote(`${c.name} --${f.name}`)}) ${action(f.value!, f.help)}; return ;;`,
      );
    }
  }
  for (const f of valueFlags(m.globals)) {
    valueCases.push(`    (*${shQuote(` --${f.name}`)}) ${action(f.value!, f.help)}; return ;;`);
  }
  const flagList = (flags: FlagModel[]) =>
    flags.map((f) => described(`--${f.name}`, f.help)).join(" ");
  const flagCases = m.commands.map((c) =>
    `      (${c.name}) flags=(${flagList([...c.flags, ...m.globals])}) ;;`
  );
  const positionalCases = m.commands.flatMap((c) =>
    c.positionals.map((ws, k) => `    (${shQuote(`${c.name} ${k}`)}) compadd -- ${ws.join(" ")} ;;`)
  );
  const allValues = [
    ...new Set(
      m.commands.flatMap((c) => valueFlags(c.flags)).map((f) => `--${f.name}`).concat(globalValues),
    ),
  ];
  return `#compdef roster
# zsh completion for roster. Generated by 'roster completions zsh': do not edit.
# Load it with: source <(roster completions zsh)   (after compinit)
# or save it as _roster in a directory on $fpath.
_roster() {
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]} cmd= w
  local -a flags cmds
  integer i
  for (( i = 2; i < CURRENT; i++ )); do
    w=\${words[i]}
    case $w in
      (${globalValues.length > 0 ? globalValues.join("|") : "--"}) (( i++ )) ;;
      (-*) ;;
      (*) cmd=$w; break ;;
    esac
  done
  integer n=0
  for (( i++; i < CURRENT; i++ )); do
    case \${words[i]} in
      (${allValues.length > 0 ? allValues.join("|") : "--"}) (( i++ )) ;;
      (-*) ;;
      (*) (( n++ )) ;;
    esac
  done
  if [[ $cur == --*=* ]]; then
    prev=\${cur%%=*}
    compset -P '*='
  fi
  case "$cmd $prev" in
${valueCases.join("\n")}
  esac
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      flags=(${flagList(m.globals)})
      _describe -t flags 'global flag' flags
    else
      cmds=(${m.commands.map((c) => described(c.name, c.summary)).join(" ")})
      _describe -t commands 'roster command' cmds
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
${flagCases.join("\n")}
    esac
    _describe -t flags 'flag' flags
    return
  fi
  case "$cmd $n" in
${positionalCases.join("\n")}
  esac
}
if [[ $funcstack[1] == _roster ]]; then
  _roster "$@"
else
  compdef _roster roster
fi
`;
}

// ---- fish ---------------------------------------------------------------------------------

/** A fish single-quoted string. */
function fq(s: string): string {
  return `'${s.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

function fishFlag(f: FlagModel, condition: string | null): string {
  const parts = ["complete -c roster"];
  if (condition) parts.push(`-n ${fq(condition)}`);
  if (f.short) parts.push(`-s ${f.short}`);
  parts.push(`-l ${f.name}`);
  const v = f.value;
  if (v?.kind === "words") parts.push(`-x -a ${fq(v.words.join(" "))}`);
  else if (v?.kind === "dirs") parts.push(`-x -a ${fq("(__fish_complete_directories)")}`);
  else if (v?.kind === "files") parts.push("-r -F");
  else if (v?.kind === "none") parts.push("-x");
  parts.push(`-d ${fq(f.help)}`);
  return parts.join(" ");
}

/** Every flag that takes a value, of any command or global: its value is no positional. */
function allValuesFish(m: Model): string[] {
  return [
    ...new Set(
      [...m.commands.flatMap((c) => valueFlags(c.flags)), ...valueFlags(m.globals)].map((f) =>
        `--${f.name}`
      ),
    ),
  ];
}

/**
 * The fish loop over the command line's words after `roster`, with `locals` declared before it:
 * it steps over the flags in `values` with their value and over other flags, and runs `word`
 * (lines) on the rest.
 */
function fishTokens(values: string[], locals: string[], word: string[]): string[] {
  return [
    "    set -l tokens (commandline -opc)",
    "    set -e tokens[1]",
    "    set -l skip 0",
    ...locals,
    "    for t in $tokens",
    "        if test $skip = 1",
    "            set skip 0",
    "            continue",
    "        end",
    "        switch $t",
    ...(values.length > 0
      ? [`            case ${values.join(" ")}`, "                set skip 1"]
      : []),
    "            case '-*'",
    "            case '*'",
    ...word,
    "        end",
    "    end",
  ];
}

function fishScript(m: Model): string {
  const globalValues = valueFlags(m.globals).map((f) => `--${f.name}`);
  const lines = [
    "# fish completion for roster. Generated by 'roster completions fish': do not edit.",
    "# Load it with: roster completions fish | source",
    "# or save it as ~/.config/fish/completions/roster.fish.",
    "",
    "# The command word: the first argument that is neither a flag nor a flag's value.",
    "function __roster_command",
    ...fishTokens(globalValues, [], ["                echo $t", "                return 0"]),
    "    return 1",
    "end",
    "",
    "# How many positional arguments follow the command word.",
    "function __roster_npos",
    ...fishTokens(allValuesFish(m), ["    set -l seen 0", "    set -l n 0"], [
      "                if test $seen = 1",
      "                    set n (math $n + 1)",
      "                end",
      "                set seen 1",
    ]),
    "    echo $n",
    "end",
    "",
    "function __roster_using",
    "    set -l cmd (__roster_command)",
    '    and test "$cmd" = $argv[1]',
    "end",
    "",
    "complete -c roster -f",
    ...m.commands.map((c) =>
      `complete -c roster -n 'not __roster_command' -a ${c.name} -d ${fq(c.summary)}`
    ),
    ...m.globals.map((f) => fishFlag(f, null)),
  ];
  for (const c of m.commands) {
    for (const f of c.flags) lines.push(fishFlag(f, `__roster_using ${c.name}`));
    c.positionals.forEach((ws, k) => {
      const when = `__roster_using ${c.name}; and test (__roster_npos) = ${k}`;
      lines.push(`complete -c roster -n ${fq(when)} -a ${fq(ws.join(" "))}`);
    });
  }
  return lines.join("\n") + "\n";
}

// ---- PowerShell ---------------------------------------------------------------------------

/** A flag's spellings (long, and short where it has one), space-separated. */
const spellings = (f: FlagModel) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])];

/** What a value flag completes to, as the script's lookup reads it. */
function psValue(v: ValueKind): string {
  if (v.kind === "words") return v.words.join(" ");
  return v.kind === "dirs" ? ":dirs" : v.kind === "files" ? ":files" : ":none";
}

function psValues(flags: FlagModel[]): string {
  const pairs = valueFlags(flags).flatMap((f) =>
    spellings(f).map((s) => `${psQuote(s)} = ${psQuote(psValue(f.value!))}`)
  );
  return `@{ ${pairs.join("; ")} }`;
}

function psFlags(flags: FlagModel[]): string {
  return psQuote(flags.flatMap(spellings).join(" "));
}

function powershellScript(m: Model): string {
  const commands = m.commands.map((c) =>
    `  ${psQuote(c.name)} = @{ flags = ${psFlags(c.flags)}; values = ${psValues(c.flags)}; ` +
    `positionals = @(${c.positionals.map((ws) => psQuote(ws.join(" "))).join(", ")}) }`
  );
  return [
    "# roster completions for PowerShell, generated from roster's command table.",
    "# Load it in $PROFILE: roster completions powershell | Out-String | Invoke-Expression",
    `$__rosterGlobalFlags = ${psFlags(m.globals)}`,
    `$__rosterGlobalValues = ${psValues(m.globals)}`,
    "$__rosterCommands = [ordered]@{",
    ...commands,
    "}",
    "Register-ArgumentCompleter -Native -CommandName roster, roster.exe -ScriptBlock {",
    "  param($wordToComplete, $commandAst, $cursorPosition)",
    "  # The words before the one under the cursor: the command, then flags, values, positionals.",
    "  $before = @($commandAst.CommandElements | Where-Object { $_.Extent.EndOffset -lt $cursorPosition } |",
    "    Select-Object -Skip 1 | ForEach-Object { $_.ToString() })",
    "  $cmd = $null; $npos = 0; $pending = $null",
    "  foreach ($w in $before) {",
    "    if ($pending) { $pending = $null; continue }",
    "    if ($w.StartsWith('-')) {",
    "      if ($__rosterGlobalValues.Contains($w) -or ($cmd -and $__rosterCommands[$cmd].values.Contains($w))) { $pending = $w }",
    "      continue",
    "    }",
    "    if ($null -eq $cmd) { $cmd = $w } else { $npos++ }",
    "  }",
    "  $spec = if ($cmd) { $__rosterCommands[$cmd] } else { $null }",
    "  if ($pending) {",
    "    $kind = if ($spec -and $spec.values.Contains($pending)) { $spec.values[$pending] } else { $__rosterGlobalValues[$pending] }",
    "    if ($kind -eq ':dirs') { $words = @(Get-ChildItem -Directory -Path \"$wordToComplete*\" -ErrorAction Ignore | ForEach-Object { $_.FullName }) }",
    "    elseif ($kind -eq ':files') { $words = @(Get-ChildItem -Path \"$wordToComplete*\" -ErrorAction Ignore | ForEach-Object { $_.FullName }) }",
    "    elseif ($kind -eq ':none') { $words = @() }",
    "    else { $words = $kind -split ' ' }",
    "  } elseif ($wordToComplete.StartsWith('-')) {",
    "    $words = (($(if ($spec) { $spec.flags } else { '' })) + ' ' + $__rosterGlobalFlags).Trim() -split ' '",
    "  } elseif ($null -eq $cmd) {",
    "    $words = @($__rosterCommands.Keys)",
    "  } elseif ($spec -and $npos -lt $spec.positionals.Count) {",
    "    $words = $spec.positionals[$npos] -split ' '",
    "  } else { $words = @() }",
    "  $words | Where-Object { $_ -and $_.StartsWith($wordToComplete) } | Sort-Object -Unique | ForEach-Object {",
    "    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)",
    "  }",
    "}",
    "",
  ].join("\n");
}

const GENERATORS: Record<Shell, (m: Model) => string> = {
  bash: bashScript,
  zsh: zshScript,
  fish: fishScript,
  powershell: powershellScript,
};

export function script(shell: Shell, model = buildModel()): string {
  return GENERATORS[shell](model);
}
