/* The screen model: a grid of cells that views draw into, with clipping, text
 * measured in display columns, named glyphs in a UTF-8 and an ASCII tier, and
 * boxes. Nothing here touches the terminal (tui-term.c does). */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-tui.h"

/* ---- character widths ----
 *
 * Widths come from these tables, not from wcwidth(), so that layout and tests
 * do not depend on the process locale. They were generated from glibc 2.36's
 * wcwidth() in C.UTF-8 (Unicode 14): every assigned code point glibc gives
 * width 0 or 2 is listed; everything else printable is one column. The
 * terminal side (tui-term.c) checks each cell against the C library's own
 * width before writing it, so a disagreement can never shift a row.
 */
typedef struct width_range {
	uint32_t first, last;
} width_range;

static const width_range zero_width[] = {
	{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2},
	{0x05C4, 0x05C5}, {0x05C7, 0x05C7}, {0x0610, 0x061A}, {0x061C, 0x061C}, {0x064B, 0x065F},
	{0x0670, 0x0670}, {0x06D6, 0x06DC}, {0x06DF, 0x06E4}, {0x06E7, 0x06E8}, {0x06EA, 0x06ED},
	{0x0711, 0x0711}, {0x0730, 0x074A}, {0x07A6, 0x07B0}, {0x07EB, 0x07F3}, {0x07FD, 0x07FD},
	{0x0816, 0x0819}, {0x081B, 0x0823}, {0x0825, 0x0827}, {0x0829, 0x082D}, {0x0859, 0x085B},
	{0x0898, 0x089F}, {0x08CA, 0x08E1}, {0x08E3, 0x0902}, {0x093A, 0x093A}, {0x093C, 0x093C},
	{0x0941, 0x0948}, {0x094D, 0x094D}, {0x0951, 0x0957}, {0x0962, 0x0963}, {0x0981, 0x0981},
	{0x09BC, 0x09BC}, {0x09C1, 0x09C4}, {0x09CD, 0x09CD}, {0x09E2, 0x09E3}, {0x09FE, 0x09FE},
	{0x0A01, 0x0A02}, {0x0A3C, 0x0A3C}, {0x0A41, 0x0A42}, {0x0A47, 0x0A48}, {0x0A4B, 0x0A4D},
	{0x0A51, 0x0A51}, {0x0A70, 0x0A71}, {0x0A75, 0x0A75}, {0x0A81, 0x0A82}, {0x0ABC, 0x0ABC},
	{0x0AC1, 0x0AC5}, {0x0AC7, 0x0AC8}, {0x0ACD, 0x0ACD}, {0x0AE2, 0x0AE3}, {0x0AFA, 0x0AFF},
	{0x0B01, 0x0B01}, {0x0B3C, 0x0B3C}, {0x0B3F, 0x0B3F}, {0x0B41, 0x0B44}, {0x0B4D, 0x0B4D},
	{0x0B55, 0x0B56}, {0x0B62, 0x0B63}, {0x0B82, 0x0B82}, {0x0BC0, 0x0BC0}, {0x0BCD, 0x0BCD},
	{0x0C00, 0x0C00}, {0x0C04, 0x0C04}, {0x0C3C, 0x0C3C}, {0x0C3E, 0x0C40}, {0x0C46, 0x0C48},
	{0x0C4A, 0x0C4D}, {0x0C55, 0x0C56}, {0x0C62, 0x0C63}, {0x0C81, 0x0C81}, {0x0CBC, 0x0CBC},
	{0x0CBF, 0x0CBF}, {0x0CC6, 0x0CC6}, {0x0CCC, 0x0CCD}, {0x0CE2, 0x0CE3}, {0x0D00, 0x0D01},
	{0x0D3B, 0x0D3C}, {0x0D41, 0x0D44}, {0x0D4D, 0x0D4D}, {0x0D62, 0x0D63}, {0x0D81, 0x0D81},
	{0x0DCA, 0x0DCA}, {0x0DD2, 0x0DD4}, {0x0DD6, 0x0DD6}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A},
	{0x0E47, 0x0E4E}, {0x0EB1, 0x0EB1}, {0x0EB4, 0x0EBC}, {0x0EC8, 0x0ECD}, {0x0F18, 0x0F19},
	{0x0F35, 0x0F35}, {0x0F37, 0x0F37}, {0x0F39, 0x0F39}, {0x0F71, 0x0F7E}, {0x0F80, 0x0F84},
	{0x0F86, 0x0F87}, {0x0F8D, 0x0F97}, {0x0F99, 0x0FBC}, {0x0FC6, 0x0FC6}, {0x102D, 0x1030},
	{0x1032, 0x1037}, {0x1039, 0x103A}, {0x103D, 0x103E}, {0x1058, 0x1059}, {0x105E, 0x1060},
	{0x1071, 0x1074}, {0x1082, 0x1082}, {0x1085, 0x1086}, {0x108D, 0x108D}, {0x109D, 0x109D},
	{0x1160, 0x11FF}, {0x135D, 0x135F}, {0x1712, 0x1714}, {0x1732, 0x1733}, {0x1752, 0x1753},
	{0x1772, 0x1773}, {0x17B4, 0x17B5}, {0x17B7, 0x17BD}, {0x17C6, 0x17C6}, {0x17C9, 0x17D3},
	{0x17DD, 0x17DD}, {0x180B, 0x180F}, {0x1885, 0x1886}, {0x18A9, 0x18A9}, {0x1920, 0x1922},
	{0x1927, 0x1928}, {0x1932, 0x1932}, {0x1939, 0x193B}, {0x1A17, 0x1A18}, {0x1A1B, 0x1A1B},
	{0x1A56, 0x1A56}, {0x1A58, 0x1A5E}, {0x1A60, 0x1A60}, {0x1A62, 0x1A62}, {0x1A65, 0x1A6C},
	{0x1A73, 0x1A7C}, {0x1A7F, 0x1A7F}, {0x1AB0, 0x1ACE}, {0x1B00, 0x1B03}, {0x1B34, 0x1B34},
	{0x1B36, 0x1B3A}, {0x1B3C, 0x1B3C}, {0x1B42, 0x1B42}, {0x1B6B, 0x1B73}, {0x1B80, 0x1B81},
	{0x1BA2, 0x1BA5}, {0x1BA8, 0x1BA9}, {0x1BAB, 0x1BAD}, {0x1BE6, 0x1BE6}, {0x1BE8, 0x1BE9},
	{0x1BED, 0x1BED}, {0x1BEF, 0x1BF1}, {0x1C2C, 0x1C33}, {0x1C36, 0x1C37}, {0x1CD0, 0x1CD2},
	{0x1CD4, 0x1CE0}, {0x1CE2, 0x1CE8}, {0x1CED, 0x1CED}, {0x1CF4, 0x1CF4}, {0x1CF8, 0x1CF9},
	{0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F},
	{0x20D0, 0x20F0}, {0x2CEF, 0x2CF1}, {0x2D7F, 0x2D7F}, {0x2DE0, 0x2DFF}, {0x302A, 0x302D},
	{0x3099, 0x309A}, {0xA66F, 0xA672}, {0xA674, 0xA67D}, {0xA69E, 0xA69F}, {0xA6F0, 0xA6F1},
	{0xA802, 0xA802}, {0xA806, 0xA806}, {0xA80B, 0xA80B}, {0xA825, 0xA826}, {0xA82C, 0xA82C},
	{0xA8C4, 0xA8C5}, {0xA8E0, 0xA8F1}, {0xA8FF, 0xA8FF}, {0xA926, 0xA92D}, {0xA947, 0xA951},
	{0xA980, 0xA982}, {0xA9B3, 0xA9B3}, {0xA9B6, 0xA9B9}, {0xA9BC, 0xA9BD}, {0xA9E5, 0xA9E5},
	{0xAA29, 0xAA2E}, {0xAA31, 0xAA32}, {0xAA35, 0xAA36}, {0xAA43, 0xAA43}, {0xAA4C, 0xAA4C},
	{0xAA7C, 0xAA7C}, {0xAAB0, 0xAAB0}, {0xAAB2, 0xAAB4}, {0xAAB7, 0xAAB8}, {0xAABE, 0xAABF},
	{0xAAC1, 0xAAC1}, {0xAAEC, 0xAAED}, {0xAAF6, 0xAAF6}, {0xABE5, 0xABE5}, {0xABE8, 0xABE8},
	{0xABED, 0xABED}, {0xD7B0, 0xD7C6}, {0xD7CB, 0xD7FB}, {0xFB1E, 0xFB1E}, {0xFE00, 0xFE0F},
	{0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0xFFF9, 0xFFFB}, {0x101FD, 0x101FD},
	{0x102E0, 0x102E0}, {0x10376, 0x1037A}, {0x10A01, 0x10A03}, {0x10A05, 0x10A06},
	{0x10A0C, 0x10A0F}, {0x10A38, 0x10A3A}, {0x10A3F, 0x10A3F}, {0x10AE5, 0x10AE6},
	{0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85},
	{0x11001, 0x11001}, {0x11038, 0x11046}, {0x11070, 0x11070}, {0x11073, 0x11074},
	{0x1107F, 0x11081}, {0x110B3, 0x110B6}, {0x110B9, 0x110BA}, {0x110C2, 0x110C2},
	{0x11100, 0x11102}, {0x11127, 0x1112B}, {0x1112D, 0x11134}, {0x11173, 0x11173},
	{0x11180, 0x11181}, {0x111B6, 0x111BE}, {0x111C9, 0x111CC}, {0x111CF, 0x111CF},
	{0x1122F, 0x11231}, {0x11234, 0x11234}, {0x11236, 0x11237}, {0x1123E, 0x1123E},
	{0x112DF, 0x112DF}, {0x112E3, 0x112EA}, {0x11300, 0x11301}, {0x1133B, 0x1133C},
	{0x11340, 0x11340}, {0x11366, 0x1136C}, {0x11370, 0x11374}, {0x11438, 0x1143F},
	{0x11442, 0x11444}, {0x11446, 0x11446}, {0x1145E, 0x1145E}, {0x114B3, 0x114B8},
	{0x114BA, 0x114BA}, {0x114BF, 0x114C0}, {0x114C2, 0x114C3}, {0x115B2, 0x115B5},
	{0x115BC, 0x115BD}, {0x115BF, 0x115C0}, {0x115DC, 0x115DD}, {0x11633, 0x1163A},
	{0x1163D, 0x1163D}, {0x1163F, 0x11640}, {0x116AB, 0x116AB}, {0x116AD, 0x116AD},
	{0x116B0, 0x116B5}, {0x116B7, 0x116B7}, {0x1171D, 0x1171F}, {0x11722, 0x11725},
	{0x11727, 0x1172B}, {0x1182F, 0x11837}, {0x11839, 0x1183A}, {0x1193B, 0x1193C},
	{0x1193E, 0x1193E}, {0x11943, 0x11943}, {0x119D4, 0x119D7}, {0x119DA, 0x119DB},
	{0x119E0, 0x119E0}, {0x11A01, 0x11A0A}, {0x11A33, 0x11A38}, {0x11A3B, 0x11A3E},
	{0x11A47, 0x11A47}, {0x11A51, 0x11A56}, {0x11A59, 0x11A5B}, {0x11A8A, 0x11A96},
	{0x11A98, 0x11A99}, {0x11C30, 0x11C36}, {0x11C38, 0x11C3D}, {0x11C3F, 0x11C3F},
	{0x11C92, 0x11CA7}, {0x11CAA, 0x11CB0}, {0x11CB2, 0x11CB3}, {0x11CB5, 0x11CB6},
	{0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D}, {0x11D3F, 0x11D45},
	{0x11D47, 0x11D47}, {0x11D90, 0x11D91}, {0x11D95, 0x11D95}, {0x11D97, 0x11D97},
	{0x11EF3, 0x11EF4}, {0x13430, 0x13438}, {0x16AF0, 0x16AF4}, {0x16B30, 0x16B36},
	{0x16F4F, 0x16F4F}, {0x16F8F, 0x16F92}, {0x16FE4, 0x16FE4}, {0x1BC9D, 0x1BC9E},
	{0x1BCA0, 0x1BCA3}, {0x1CF00, 0x1CF2D}, {0x1CF30, 0x1CF46}, {0x1D167, 0x1D169},
	{0x1D173, 0x1D182}, {0x1D185, 0x1D18B}, {0x1D1AA, 0x1D1AD}, {0x1D242, 0x1D244},
	{0x1DA00, 0x1DA36}, {0x1DA3B, 0x1DA6C}, {0x1DA75, 0x1DA75}, {0x1DA84, 0x1DA84},
	{0x1DA9B, 0x1DA9F}, {0x1DAA1, 0x1DAAF}, {0x1E000, 0x1E006}, {0x1E008, 0x1E018},
	{0x1E01B, 0x1E021}, {0x1E023, 0x1E024}, {0x1E026, 0x1E02A}, {0x1E130, 0x1E136},
	{0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E8D0, 0x1E8D6}, {0x1E944, 0x1E94A},
	{0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xE0100, 0xE01EF},
};

static const width_range double_width[] = {
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x2E99}, {0x2E9B, 0x2EF3}, {0x2F00, 0x2FD5}, {0x2FF0, 0x2FFB}, {0x3000, 0x3029},
	{0x302E, 0x303E}, {0x3041, 0x3096}, {0x309B, 0x30FF}, {0x3105, 0x312F}, {0x3131, 0x318E},
	{0x3190, 0x31E3}, {0x31F0, 0x321E}, {0x3220, 0xA48C}, {0xA490, 0xA4C6}, {0xA960, 0xA97C},
	{0xAC00, 0xD7A3}, {0xF900, 0xFA6D}, {0xFA70, 0xFAD9}, {0xFE10, 0xFE19}, {0xFE30, 0xFE52},
	{0xFE54, 0xFE66}, {0xFE68, 0xFE6B}, {0xFF01, 0xFF60}, {0xFFE0, 0xFFE6},
	{0x16FE0, 0x16FE3}, {0x16FF0, 0x16FF1}, {0x17000, 0x187F7}, {0x18800, 0x18CD5},
	{0x18D00, 0x18D08}, {0x1AFF0, 0x1AFF3}, {0x1AFF5, 0x1AFFB}, {0x1AFFD, 0x1AFFE},
	{0x1B000, 0x1B122}, {0x1B150, 0x1B152}, {0x1B164, 0x1B167}, {0x1B170, 0x1B2FB},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
	{0x1F200, 0x1F202}, {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251},
	{0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C},
	{0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0},
	{0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC},
	{0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A},
	{0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5},
	{0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6DD, 0x1F6DF},
	{0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0},
	{0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FA74},
	{0x1FA78, 0x1FA7C}, {0x1FA80, 0x1FA86}, {0x1FA90, 0x1FAAC}, {0x1FAB0, 0x1FABA},
	{0x1FAC0, 0x1FAC5}, {0x1FAD0, 0x1FAD9}, {0x1FAE0, 0x1FAE7}, {0x1FAF0, 0x1FAF6},
	{0x20000, 0x2A6DF}, {0x2A700, 0x2B738}, {0x2B740, 0x2B81D}, {0x2B820, 0x2CEA1},
	{0x2CEB0, 0x2EBE0}, {0x2F800, 0x2FA1D}, {0x30000, 0x3134A},
};

static bool
in_table(const width_range *t, int n, uint32_t c)
{
	int lo = 0, hi = n - 1;
	if (c < t[0].first || c > t[n - 1].last)
		return false;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (c < t[mid].first)
			hi = mid - 1;
		else if (c > t[mid].last)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

#define N_ZERO ((int)(sizeof zero_width / sizeof zero_width[0]))
#define N_DOUBLE ((int)(sizeof double_width / sizeof double_width[0]))

/* Columns of code point c: 0, 1 or 2, or -1 for a control character. */
static int
codepoint_width(uint32_t c)
{
	if (c < 0x20 || (c >= 0x7f && c < 0xa0))
		return -1;
	if (c < 0x300)
		return 1;
	if (in_table(zero_width, N_ZERO, c))
		return 0;
	if (in_table(double_width, N_DOUBLE, c))
		return 2;
	return 1;
}

int32_t
st_utf8_decode(const unsigned char *s, size_t n, int *len)
{
	*len = 1;
	if (n == 0)
		return -1;
	unsigned char c = s[0];
	if (c < 0x80)
		return c;
	int k;
	uint32_t cp, min;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2;
		cp = c & 0x1fu;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		cp = c & 0x0fu;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		cp = c & 0x07u;
		min = 0x10000;
	} else {
		return -1;
	}
	if ((size_t)k > n)
		return -1;
	for (int i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1; /* also stops at a NUL */
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*len = k;
	return (int32_t)cp;
}

/* The NUL-terminated form the screen's own text takes. */
static int32_t
utf8_decode(const unsigned char *s, int *len)
{
	return st_utf8_decode(s, SIZE_MAX, len);
}

void
st_quote_snippet(const char *s, size_t n, char *out, size_t size)
{
	if (size == 0)
		return;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		int len;
		int32_t cp = st_utf8_decode((const unsigned char *)s + i, n - i, &len);
		bool printable = cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0);
		size_t need = printable ? (size_t)len : 1;
		if (i + need > 40 || k + need + 4 > size) {
			memcpy(out + k, "...", 3);
			k += 3;
			break;
		}
		if (printable)
			memcpy(out + k, s + i, need);
		else
			out[k] = '?';
		k += need;
		i += (size_t)len;
	}
	out[k] = '\0';
}

/* What an invalid byte or a control character shows as. */
static const char *
replacement(const st_screen *s)
{
	return s->ascii ? "?" : "\xef\xbf\xbd";
}

int
st_text_width(const char *utf8)
{
	int cols = 0;
	if (utf8 == NULL)
		return 0;
	for (const unsigned char *p = (const unsigned char *)utf8; *p;) {
		int len;
		int32_t cp = utf8_decode(p, &len);
		p += len;
		int w = cp < 0 ? 1 : codepoint_width((uint32_t)cp);
		cols += w < 0 ? 1 : w;
	}
	return cols;
}

/* ---- glyphs ---- */

static const char *const glyph_utf8[ST_G_COUNT] = {
	[ST_G_HLINE] = "\u2500", [ST_G_VLINE] = "\u2502",
	[ST_G_TL] = "\u250c", [ST_G_TR] = "\u2510", [ST_G_BL] = "\u2514", [ST_G_BR] = "\u2518",
	[ST_G_TEE_DOWN] = "\u252c", [ST_G_TEE_UP] = "\u2534", [ST_G_TEE_RIGHT] = "\u251c",
	[ST_G_TEE_LEFT] = "\u2524", [ST_G_CROSS] = "\u253c",
	[ST_G_ARROW_DOWN] = "\u25bd", [ST_G_OUTPUT] = "\u25cf",
	[ST_G_ERROR] = "\u2716", [ST_G_WARNING] = "\u26a0", [ST_G_INFO] = "\u2139",
	[ST_G_CHECK_ON] = "\u2611", [ST_G_CHECK_OFF] = "\u2610",
	[ST_G_TRIANGLE_RIGHT] = "\u25b8", [ST_G_TRIANGLE_DOWN] = "\u25be",
	[ST_G_MINIMISED] = "\u25aa", [ST_G_DOT] = "\u00b7", [ST_G_TIMES] = "\u00d7",
	[ST_G_ELLIPSIS] = "\u2026",
};

static const char *const glyph_ascii[ST_G_COUNT] = {
	[ST_G_HLINE] = "-", [ST_G_VLINE] = "|",
	[ST_G_TL] = "+", [ST_G_TR] = "+", [ST_G_BL] = "+", [ST_G_BR] = "+",
	[ST_G_TEE_DOWN] = "+", [ST_G_TEE_UP] = "+", [ST_G_TEE_RIGHT] = "+",
	[ST_G_TEE_LEFT] = "+", [ST_G_CROSS] = "+",
	[ST_G_ARROW_DOWN] = "v", [ST_G_OUTPUT] = "o",
	[ST_G_ERROR] = "x", [ST_G_WARNING] = "!", [ST_G_INFO] = "i",
	[ST_G_CHECK_ON] = "[x]", [ST_G_CHECK_OFF] = "[ ]",
	[ST_G_TRIANGLE_RIGHT] = ">", [ST_G_TRIANGLE_DOWN] = "v",
	[ST_G_MINIMISED] = "#", [ST_G_DOT] = ".", [ST_G_TIMES] = "x",
	[ST_G_ELLIPSIS] = "...",
};

const char *
st_glyph_text(const st_screen *s, st_glyph g)
{
	if ((int)g < 0 || g >= ST_G_COUNT)
		return "?";
	return s != NULL && s->ascii ? glyph_ascii[g] : glyph_utf8[g];
}

/* ---- cells ---- */

static const st_style plain_style;

static void
set_blank(st_cell *c, const st_style *style)
{
	memcpy(c->ch, " ", 2);
	c->width = 1;
	c->style = *style;
}

/* Before (x, y) is overwritten: a wide character it is half of loses its
 * other half, which becomes a blank, so that every width-2 cell stays
 * followed by its width-0 continuation and nothing else. */
static void
unpair(st_screen *s, int x, int y)
{
	st_cell *c = &s->cells[(size_t)y * (size_t)s->w + (size_t)x];
	if (c->width == 0 && x > 0 && c[-1].width == 2)
		set_blank(&c[-1], &c[-1].style);
	else if (c->width == 2 && x + 1 < s->w && c[1].width == 0)
		set_blank(&c[1], &c[1].style);
}

static bool
in_clip(const st_screen *s, long x, long y)
{
	return x >= s->clip.x && x < (long)s->clip.x + s->clip.w && y >= s->clip.y &&
	       y < (long)s->clip.y + s->clip.h;
}

/* Writes one character of width 1 or 2 at (x, y). When the clip cuts a wide
 * character, its visible half becomes a blank. Returns the cell written, or
 * NULL when the character is not wholly visible. */
static st_cell *
put(st_screen *s, long x, long y, const char *ch, size_t len, int width, const st_style *style)
{
	bool first = in_clip(s, x, y), second = width == 2 && in_clip(s, x + 1, y);
	if (width == 1 || (first && second) || (!first && !second)) {
		if (!first)
			return NULL;
		int ix = (int)x, iy = (int)y;
		unpair(s, ix, iy);
		if (width == 2)
			unpair(s, ix + 1, iy);
		st_cell *c = &s->cells[(size_t)iy * (size_t)s->w + (size_t)ix];
		memcpy(c->ch, ch, len);
		c->ch[len] = '\0';
		c->width = (uint8_t)width;
		c->style = *style;
		if (width == 2) {
			c[1].ch[0] = '\0';
			c[1].width = 0;
			c[1].style = *style;
		}
		return c;
	}
	long vx = first ? x : x + 1;
	unpair(s, (int)vx, (int)y);
	set_blank(&s->cells[(size_t)y * (size_t)s->w + (size_t)vx], style);
	return NULL;
}

/* Lays out utf8 from (x, y) over at most limit columns, writing what falls
 * inside the clip. Zero-width characters join the character before them
 * while the cell has room; a wide character that would pass limit ends the
 * text. Returns the columns the text took. */
static int
draw_text(st_screen *s, long x, long y, const char *utf8, const st_style *style, long limit)
{
	long col = 0;
	st_cell *last = NULL;
	if (utf8 == NULL || limit <= 0)
		return 0;
	if (style == NULL)
		style = &plain_style;
	for (const unsigned char *p = (const unsigned char *)utf8; *p;) {
		int len;
		int32_t cp = utf8_decode(p, &len);
		const char *bytes = (const char *)p;
		size_t n = (size_t)len;
		int w = cp < 0 ? -1 : codepoint_width((uint32_t)cp);
		p += len;
		if (w < 0) {
			bytes = replacement(s);
			n = strlen(bytes);
			w = 1;
		}
		if (w == 0) {
			size_t have = last != NULL ? strlen(last->ch) : 0;
			if (last != NULL && have + n < sizeof last->ch) {
				memcpy(last->ch + have, bytes, n);
				last->ch[have + n] = '\0';
			}
			continue;
		}
		if (col + w > limit)
			break;
		last = put(s, x + col, y, bytes, n, w, style);
		col += w;
	}
	return (int)col;
}

/* The columns from x to the clip's right edge (at least 0). */
static long
to_clip_edge(const st_screen *s, int x)
{
	long n = (long)s->clip.x + s->clip.w - x;
	return n < 0 ? 0 : n;
}

/* ---- the screen ---- */

st_screen *
st_screen_new(int w, int h)
{
	st_screen *s = st_xcalloc(1, sizeof *s);
	st_screen_resize(s, w, h);
	return s;
}

void
st_screen_free(st_screen *s)
{
	if (s == NULL)
		return;
	free(s->cells);
	free(s);
}

void
st_screen_resize(st_screen *s, int w, int h)
{
	if (w < 0)
		w = 0;
	if (h < 0)
		h = 0;
	st_cell *cells = st_xcalloc((size_t)w * (size_t)h + 1, sizeof *cells);
	for (int y = 0; y < h; y++) {
		for (int x = 0; x < w; x++) {
			st_cell *c = &cells[(size_t)y * (size_t)w + (size_t)x];
			if (y < s->h && x < s->w)
				*c = s->cells[(size_t)y * (size_t)s->w + (size_t)x];
			else
				set_blank(c, &plain_style);
		}
		/* A wide character cut by the new right edge becomes a blank. */
		if (w > 0 && cells[(size_t)y * (size_t)w + (size_t)w - 1].width == 2)
			set_blank(&cells[(size_t)y * (size_t)w + (size_t)w - 1],
			          &cells[(size_t)y * (size_t)w + (size_t)w - 1].style);
	}
	free(s->cells);
	s->cells = cells;
	s->w = w;
	s->h = h;
	s->clip = (st_rect){ 0, 0, w, h };
}

void
st_screen_clear(st_screen *s, const st_style *style)
{
	if (style == NULL)
		style = &plain_style;
	for (size_t i = 0; i < (size_t)s->w * (size_t)s->h; i++)
		set_blank(&s->cells[i], style);
}

st_cell *
st_screen_at(st_screen *s, int x, int y)
{
	if (x < 0 || y < 0 || x >= s->w || y >= s->h)
		return NULL;
	return &s->cells[(size_t)y * (size_t)s->w + (size_t)x];
}

/* The intersection of a and b; empty ones have w or h 0. */
static st_rect
intersect(st_rect a, st_rect b)
{
	long x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
	long x1 = (long)a.x + a.w < (long)b.x + b.w ? (long)a.x + a.w : (long)b.x + b.w;
	long y1 = (long)a.y + a.h < (long)b.y + b.h ? (long)a.y + a.h : (long)b.y + b.h;
	if (x1 <= x0 || y1 <= y0 || a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0)
		return (st_rect){ (int)x0, (int)y0, 0, 0 };
	return (st_rect){ (int)x0, (int)y0, (int)(x1 - x0), (int)(y1 - y0) };
}

st_rect
st_screen_set_clip(st_screen *s, st_rect clip)
{
	st_rect old = s->clip;
	st_rect r = intersect(clip, (st_rect){ 0, 0, s->w, s->h });
	if (r.w == 0 || r.h == 0)
		r = (st_rect){ 0, 0, 0, 0 };
	s->clip = r;
	return old;
}

int
st_screen_text(st_screen *s, int x, int y, const char *utf8, const st_style *style, int max_cols)
{
	long limit = max_cols < 0 ? to_clip_edge(s, x) : max_cols;
	return draw_text(s, x, y, utf8, style, limit);
}

int
st_screen_text_fit(st_screen *s, int x, int y, const char *utf8, const st_style *style,
                   int max_cols)
{
	long limit = max_cols < 0 ? to_clip_edge(s, x) : max_cols;
	if (utf8 == NULL || limit <= 0)
		return 0;
	if (st_text_width(utf8) <= limit)
		return draw_text(s, x, y, utf8, style, limit);
	const char *ellipsis = st_glyph_text(s, ST_G_ELLIPSIS);
	long ew = st_text_width(ellipsis);
	if (limit <= ew)
		return draw_text(s, x, y, ellipsis, style, limit);
	int n = draw_text(s, x, y, utf8, style, limit - ew);
	return n + draw_text(s, (long)x + n, y, ellipsis, style, ew);
}

int
st_screen_printf(st_screen *s, int x, int y, const st_style *style, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = st_xvasprintf(fmt, ap);
	va_end(ap);
	int n = st_screen_text(s, x, y, text, style, -1);
	free(text);
	return n;
}

int
st_screen_glyph(st_screen *s, int x, int y, st_glyph g, const st_style *style)
{
	const char *text = st_glyph_text(s, g);
	return draw_text(s, x, y, text, style, st_text_width(text));
}

void
st_screen_fill(st_screen *s, st_rect r, const char *ch, const st_style *style)
{
	if (style == NULL)
		style = &plain_style;
	const char *bytes = " ";
	int len = 1, w = 1;
	if (ch != NULL && *ch != '\0') {
		int32_t cp = utf8_decode((const unsigned char *)ch, &len);
		w = cp < 0 ? -1 : codepoint_width((uint32_t)cp);
		bytes = ch;
		if (w < 0) {
			bytes = replacement(s);
			len = (int)strlen(bytes);
			w = 1;
		} else if (w == 0) {
			bytes = " ";
			len = 1;
			w = 1;
		}
	}
	st_rect area = intersect(r, s->clip);
	if (area.w == 0 || area.h == 0)
		return;
	for (long y = area.y; y < (long)area.y + area.h; y++) {
		/* Wide characters keep to r's own grid so that clipping does not shift them. */
		long x = area.x;
		if (w == 2 && (x - r.x) % 2 != 0)
			x--;
		for (; x < (long)area.x + area.w; x += w)
			put(s, x, y, bytes, (size_t)len, w, style);
	}
}

void
st_screen_box(st_screen *s, st_rect r, const st_style *border, const char *title,
              const st_style *title_style)
{
	if (r.w <= 0 || r.h <= 0)
		return;
	if (border == NULL)
		border = &plain_style;
	if (r.h == 1 || r.w == 1) {
		st_screen_fill(s, r, st_glyph_text(s, r.h == 1 ? ST_G_HLINE : ST_G_VLINE), border);
		return;
	}
	long right = (long)r.x + r.w - 1, bottom = (long)r.y + r.h - 1;
	const char *h = st_glyph_text(s, ST_G_HLINE), *v = st_glyph_text(s, ST_G_VLINE);
	/* Only the part that can be on the screen is walked: a box may be huge. */
	long x0 = (long)r.x + 1 > 0 ? (long)r.x + 1 : 0, x1 = right < s->w ? right : s->w;
	long y0 = (long)r.y + 1 > 0 ? (long)r.y + 1 : 0, y1 = bottom < s->h ? bottom : s->h;
	for (long x = x0; x < x1; x++) {
		draw_text(s, x, r.y, h, border, 1);
		draw_text(s, x, bottom, h, border, 1);
	}
	for (long y = y0; y < y1; y++) {
		draw_text(s, r.x, y, v, border, 1);
		draw_text(s, right, y, v, border, 1);
	}
	draw_text(s, r.x, r.y, st_glyph_text(s, ST_G_TL), border, 1);
	draw_text(s, right, r.y, st_glyph_text(s, ST_G_TR), border, 1);
	draw_text(s, r.x, bottom, st_glyph_text(s, ST_G_BL), border, 1);
	draw_text(s, right, bottom, st_glyph_text(s, ST_G_BR), border, 1);
	/* The title follows the top-left corner, then one blank before the line
	 * goes on: "┌1 Palette ───┐". */
	if (title != NULL && *title != '\0' && r.w >= 4) {
		int n = st_screen_text_fit(s, r.x + 1, r.y, title,
		                           title_style != NULL ? title_style : border, r.w - 3);
		draw_text(s, (long)r.x + 1 + n, r.y, " ", border, 1);
	}
}

char *
st_screen_dump(const st_screen *s)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "");
	for (int y = 0; y < s->h; y++) {
		size_t keep = b.len;
		for (int x = 0; x < s->w; x++) {
			const st_cell *c = &s->cells[(size_t)y * (size_t)s->w + (size_t)x];
			if (c->width == 0)
				continue;
			st_buf_puts(&b, c->ch);
			if (strcmp(c->ch, " ") != 0)
				keep = b.len;
		}
		b.len = keep;
		b.data[b.len] = '\0';
		st_buf_putc(&b, '\n');
	}
	return st_buf_take(&b);
}

char *
st_screen_row_text(const st_screen *s, int x, int y, int w)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_puts(&b, "");
	if (y < 0 || y >= s->h || w <= 0)
		return st_buf_take(&b);
	long end = (long)x + w;
	for (long cx = x; cx < end; cx++) {
		if (cx < 0 || cx >= s->w) {
			st_buf_putc(&b, ' ');
			continue;
		}
		const st_cell *c = &s->cells[(size_t)y * (size_t)s->w + (size_t)cx];
		if (c->width == 0) {
			if (cx == x)
				st_buf_putc(&b, ' '); /* the second half of a wide character */
			continue;
		}
		if (c->width == 2 && cx + 1 >= end)
			st_buf_putc(&b, ' '); /* its second half falls outside */
		else
			st_buf_puts(&b, c->ch);
	}
	return st_buf_take(&b);
}

bool
st_style_equal(const st_style *a, const st_style *b)
{
	return a->fg == b->fg && a->bg == b->bg && a->attrs == b->attrs;
}
