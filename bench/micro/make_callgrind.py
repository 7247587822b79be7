#!/usr/bin/env python3
"""Writes a synthetic callgrind output file of about SIZE MB, shaped like
`valgrind --tool=callgrind --cache-sim=yes --dump-instr=yes` output of a big
C++ program: 9 cache events, positions "instr line", name compression, long
demangled template names, inlined files (fi=/fe=), calls (cfn=/calls=),
subposition compression. For bench_profile (issue 12's parsing figure).

Usage: make_callgrind.py OUT SIZE_MB [FUNCTIONS] [SEED]
"""
import random
import sys


def main():
    out, size_mb = sys.argv[1], float(sys.argv[2])
    functions = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    target = int(size_mb * 1e6)
    events = "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw".split()
    files = [f"/src/module{i // 50}/file{i}.cpp" for i in range(max(100, functions // 20))]
    headers = [f"/usr/include/c++/12/bits/header{i}.h" for i in range(200)]
    objects = [f"/usr/lib/libpart{i}.so" for i in range(20)]

    def fn_name(i):
        return (f"ns{i % 97}::Widget{i % 1013}<std::vector<int, std::allocator<int> >, "
                f"std::basic_string<char, std::char_traits<char>, std::allocator<char> > >::method{i}"
                f"(int, std::string const&)")

    defined = {"ob": set(), "fl": set(), "fn": set()}

    def ref(space, i, name):
        if i in defined[space]:
            return f"({i + 1})"
        defined[space].add(i)
        return f"({i + 1}) {name}"

    totals = [0] * len(events)
    written = 0
    with open(out, "w") as f:
        def w(s):
            nonlocal written
            f.write(s)
            written += len(s)

        w("# callgrind format\nversion: 1\ncreator: make_callgrind.py\npid: 1\ncmd: ./big\npart: 1\n\n"
          "positions: instr line\nevents: " + " ".join(events) + "\n\n")
        i = 0
        while written < target:
            fid = i % functions
            ob = fid % len(objects)
            fl = fid % len(files)
            w(f"ob={ref('ob', ob, objects[ob])}\nfl={ref('fl', fl, files[fl])}\nfn={ref('fn', fid, fn_name(fid))}\n")
            addr = 0x400000 + fid * 0x40
            w(f"0x{addr:x} {10 + fid % 500}")
            for _ in range(rnd.randint(5, 30)):
                cost = [rnd.randint(0, 2000)] + [rnd.randint(0, 50) for _ in events[1:]]
                for k, c in enumerate(cost):
                    totals[k] += c
                w(f" {' '.join(map(str, cost))}\n+{rnd.randint(1, 8)} +{rnd.randint(0, 2)}")
                if rnd.random() < 0.1:
                    h = rnd.randrange(len(headers))
                    w(f" 1\nfi={ref('fl', len(files) + h, headers[h])}\n+2 *")
                    w(f" 1\nfe={ref('fl', fl, files[fl])}\n+1 *")
                if rnd.random() < 0.15:
                    # As callgrind writes a call: the callee's object and
                    # file first (it names a function by all three).
                    callee = rnd.randrange(functions)
                    cob, cfl = callee % len(objects), callee % len(files)
                    w(f" 1\ncob={ref('ob', cob, objects[cob])}\ncfi={ref('fl', cfl, files[cfl])}\n"
                      f"cfn={ref('fn', callee, fn_name(callee))}\n"
                      f"calls={rnd.randint(1, 1000)} 0x{0x400000 + callee * 0x40:x} 1\n")
                    w(f"* * {' '.join(str(rnd.randint(100, 100000)) for _ in events)}\n+1 *")
            w(" 1\n\n")
            i += 1
        w("summary: " + " ".join(map(str, totals)) + "\n")
    print(f"{out}: {written / 1e6:.1f} MB, {min(i, functions)} functions, {i} function blocks")


if __name__ == "__main__":
    main()
