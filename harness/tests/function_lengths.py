#!/usr/bin/env python3
"""Lists the production functions of harness/<stage>/*.cpp longer than a limit (default 100 lines).

usage: harness/tests/function_lengths.py [LIMIT [REPO_ROOT]]

A function's length runs from the first line of its signature to its closing brace. The scan is
the one harness/tests/core_function_length_test.cpp does (keep them in step): comments and string
literals are blanked, then every brace block at namespace or class scope whose header has
parentheses and no '=' outside them is a function; initialisers (data tables) are not.
"""
import re, sys, pathlib

def strip(src):
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == 'R' and src.startswith('R"', i) and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            k = src.find('(', i + 2)
            delim = ')' + src[i + 2:k] + '"'
            j = src.find(delim, k)
            j = n if j < 0 else j + len(delim)
            out.append('""' + re.sub(r'[^\n]', ' ', src[i + 2:j])); i = j
        elif c == '"' or (c == "'" and not (i > 0 and src[i-1].isalnum())):
            j = i + 1
            while j < n and src[j] != c and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + ' ' * (j - i - 2) + c if j - i >= 2 else src[i:j]); i = j
        else:
            out.append(c); i += 1
    return ''.join(out)

def without_parens(s):
    out, depth = [], 0
    for c in s:
        if c == '(': depth += 1
        elif c == ')': depth -= 1
        elif depth == 0: out.append(c)
    return ''.join(out)

def functions(src):
    """(name, first line, length in lines from the signature to the closing brace)."""
    text = strip(src)
    stack, start, found = [], 0, []
    for i, c in enumerate(text):
        if c in ';{}':
            if c == '{':
                header = text[start:i]
                if any(k == 'function' for k, *_ in stack):
                    kind = 'inner'
                else:
                    outer = re.sub(r'operator\s*[^\sA-Za-z_]*', 'operator', without_parens(header))
                    if '=' in outer or '(' not in header:
                        kind = 'scope' if re.search(r'\b(namespace|class|struct|union|enum|extern)\b', outer) else 'data'
                    else:
                        kind = 'function'
                first = start + len(header) - len(header.lstrip())
                stack.append((kind, header.strip(), text.count('\n', 0, first) + 1))
            elif c == '}' and stack:
                kind, header, line = stack.pop()
                if kind == 'function':
                    end = text.count('\n', 0, i) + 1
                    name = re.sub(r'\s+', ' ', header.split('(')[0]).split(' ')[-1]
                    found.append((name, line, end - line + 1))
            start = i + 1
    return found

if __name__ == '__main__':
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    root = pathlib.Path(__file__).resolve().parents[2] if len(sys.argv) < 3 else pathlib.Path(sys.argv[2])
    stages = re.search(r'set\(ABVM_STAGES([^)]*)\)', (root / 'CMakeLists.txt').read_text()).group(1).split()
    for st in stages:
        for f in sorted((root / 'harness' / st).rglob('*.cpp')):
            for name, line, length in functions(f.read_text()):
                if length > limit:
                    print(f'{f.relative_to(root)}:{line}: {name} {length} lines')
