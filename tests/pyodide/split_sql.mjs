// Splits a migration into statements for D1's batch(): comments and quoted text are skipped,
// and a trigger body (BEGIN ... END) stays in one statement with the semicolons inside it.
export function splitSql(script) {
  const statements = [];
  let start = 0;
  let depth = 0;
  let words = [];
  let i = 0;
  const isTrigger = () => words[0] === "CREATE" && words.slice(1, 3).includes("TRIGGER");
  while (i < script.length) {
    const ch = script[i];
    const next = script[i + 1];
    if (ch === "-" && next === "-") {
      i = script.indexOf("\n", i);
      if (i === -1) i = script.length;
    } else if (ch === "/" && next === "*") {
      const end = script.indexOf("*/", i + 2);
      i = end === -1 ? script.length : end + 2;
    } else if (ch === "'" || ch === '"' || ch === "`" || ch === "[") {
      const close = ch === "[" ? "]" : ch;
      let j = i + 1;
      // A doubled quote inside quoted text is an escaped quote, not the end.
      while (j < script.length && !(script[j] === close && script[j + 1] !== close)) j += script[j] === close ? 2 : 1;
      i = j + 1;
    } else if (/[A-Za-z_]/.test(ch)) {
      let j = i;
      while (j < script.length && /[A-Za-z0-9_$]/.test(script[j])) j++;
      const word = script.slice(i, j).toUpperCase();
      words.push(word);
      if (word === "CASE" || (word === "BEGIN" && isTrigger())) depth++;
      else if (word === "END" && depth > 0) depth--;
      i = j;
    } else if (ch === ";" && depth === 0) {
      const text = script.slice(start, i).trim();
      if (words.length) statements.push(stripComments(text));
      start = i + 1;
      words = [];
      i++;
    } else {
      i++;
    }
  }
  const rest = script.slice(start).trim();
  if (words.length) statements.push(stripComments(rest));
  return statements;
}

// Leading comment lines only: D1 is fine with comments, but the statement list reads better.
function stripComments(text) {
  return text.replace(/^(\s*--[^\n]*\n)+/, "").trim();
}
