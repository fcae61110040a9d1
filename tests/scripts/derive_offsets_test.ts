/**
 * scripts/derive_offsets.ts computes C offsets from cgo -godefs output by Go's layout rules;
 * these cases pin those rules on small structs whose layout is worked out by hand below.
 */
import { assertEquals, assertThrows } from "../assert.ts";
import { deriveTable, fieldAt, layoutOf, parseGo } from "../../scripts/derive_offsets.ts";

const SOURCE = `
// cgo -godefs style input
package demo

const SizeofOuter = 0x38

type (
	_C_int int32 /* a named basic type */
)

type Pair struct {
	A int64
	B _C_int
	_ [4]byte
}

type Outer struct {
	Flag  int8
	Id    int32 // padded to 4
	Name  [5]byte
	Ptr   *Pair // padded to 8
	Inner Pair
	Tail  [3]int16
}
`;

Deno.test("derive_offsets: Go layout rules", async (t) => {
  const decls = parseGo(SOURCE);
  await t.step("a struct is aligned to its widest member and its size rounded up", () => {
    assertEquals(layoutOf(decls, "Pair").size, 16);
    assertEquals(layoutOf(decls, "Pair").align, 8);
    // Flag 0, Id 4, Name 8..13, Ptr 16, Inner 24..40, Tail 40..46, rounded up to 48.
    assertEquals(layoutOf(decls, "Outer").size, 48);
  });
  await t.step("offsets through padding, arrays, pointers and nested structs", () => {
    assertEquals(fieldAt(decls, "Outer", "Flag"), { offset: 0, size: 1, type: "int8" });
    assertEquals(fieldAt(decls, "Outer", "Id"), { offset: 4, size: 4, type: "int32" });
    assertEquals(fieldAt(decls, "Outer", "Name"), { offset: 8, size: 5, type: "[5]byte" });
    assertEquals(fieldAt(decls, "Outer", "Ptr").offset, 16);
    assertEquals(fieldAt(decls, "Outer", "Inner.B"), { offset: 32, size: 4, type: "_C_int" });
    assertEquals(fieldAt(decls, "Outer", "Tail"), { offset: 40, size: 6, type: "[3]int16" });
  });
  await t.step("unknown fields and types are errors, not guesses", () => {
    assertThrows(() => fieldAt(decls, "Outer", "Inner.C"));
    assertThrows(() => layoutOf(parseGo("type X struct {\n\tA Missing\n}\n"), "X"));
  });
  await t.step("the computed size must equal the sizeof cgo wrote", () => {
    const target = {
      os: "darwin" as const,
      arch: "amd64" as const,
      repo: "golang/sys" as const,
      path: "demo.go",
      type: "Outer",
      sizeConst: "SizeofOuter",
      fields: { id: "Id" },
    };
    // SizeofOuter is 0x38 (56), the layout 48: the script refuses to write a table.
    assertThrows(() => deriveTable(target, SOURCE, "0".repeat(40)));
    const fixed = SOURCE.replace("0x38", "0x30");
    assertEquals(deriveTable(target, fixed, "0".repeat(40)).fields, {
      id: { offset: 4, size: 4, type: "int32" },
    });
  });
});
