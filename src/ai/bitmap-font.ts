/** Width and height, in cells, of one glyph of the built-in 5x7 font. */
export const GLYPH_WIDTH = 5;
export const GLYPH_HEIGHT = 7;

// The classic 5x7 dot-matrix shapes: 7 rows per glyph, each row one base-32 digit whose 5 bits are
// the cells from left to right. Lowercase is drawn as uppercase.
const CHARS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,!?-:\'"()&/+#';
const ROWS =
  'ehjlphe4c4444eeh1248vv2421he26aiv22vgu11he68guhhev124888ehhehheehhf12cehhhvhhuhhuhhuehggghesihhhisvgguggvv' +
  'ggugggehgnhhfhhhvhhhe44444e72222ichikokihggggggvhrllhhhhhpljhhehhhhheuhhugggehhhliduhhukihfgge11uv444444hhhhh' +
  'hehhhhha4hhhlllahha4ahhhhha444v1248gv00000cc0000c484444404eh12404000v0000cc0cc0c480000aaa000024888428422248c' +
  'ik8lid01248g0044v440aavavaa';

/** The 7 row bitmasks of `char` (bit 4 is the leftmost cell), or undefined when the font lacks it. */
export function glyphRows(char: string): number[] | undefined {
  const index = CHARS.indexOf(char.toUpperCase());
  if (index < 0 || char === '') return undefined;
  return [...ROWS.slice(index * GLYPH_HEIGHT, (index + 1) * GLYPH_HEIGHT)].map((digit) => parseInt(digit, 32));
}

/** Text reduced to what the font can draw: accents dropped, uppercase, anything else a space. */
export function fontText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^ ]/g, (c) => (glyphRows(c) ? c : ' '))
    .replace(/\s+/g, ' ')
    .trim();
}
