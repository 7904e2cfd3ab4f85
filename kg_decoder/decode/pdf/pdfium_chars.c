/* Every character of a PDFium text page read in one call (see pdfium_chars.py): a character's
 * reading through ctypes costs about 9 us in six foreign calls, here about 0.12 us. PDFium's functions
 * are handed in as pointers (pypdfium2 has loaded the library), so this file links to nothing.
 * Built by scripts/setup.sh: cc -O2 -shared -fPIC -o _pdfium_chars.so pdfium_chars.c */

typedef struct { float left, top, right, bottom; } rect_f; /* PDFium's FS_RECTF */

typedef unsigned int (*unicode_f)(void *, int);
typedef int (*flag_f)(void *, int);
typedef int (*box_f)(void *, int, double *, double *, double *, double *);
typedef int (*loose_f)(void *, int, rect_f *);
typedef int (*origin_f)(void *, int, double *, double *);
typedef void *(*object_f)(void *, int);
typedef float (*angle_f)(void *, int);

enum { GENERATED = 1, BOX = 2, LOOSE = 4, ORIGIN = 8 };
enum { NUMBERS = 11 }; /* tight left, right, bottom, top; loose left, bottom, right, top; origin x, y; angle */

void read_characters(void *page, int count, unicode_f unicode, flag_f generated, box_f box, loose_f loose,
                     origin_f origin, object_f object, angle_f angle, unsigned int *codes, int *flags,
                     double *numbers, unsigned long long *objects) {
    for (int i = 0; i < count; i++) {
        double *n = numbers + (long)i * NUMBERS;
        rect_f rect;
        int flag = 0;
        codes[i] = unicode(page, i);
        if (generated(page, i) == 1) flag |= GENERATED;
        if (box(page, i, n, n + 1, n + 2, n + 3)) flag |= BOX;
        if (loose(page, i, &rect)) {
            flag |= LOOSE;
            n[4] = rect.left; n[5] = rect.bottom; n[6] = rect.right; n[7] = rect.top;
        }
        if (origin(page, i, n + 8, n + 9)) flag |= ORIGIN;
        n[10] = angle(page, i);
        objects[i] = (unsigned long long)object(page, i);
        flags[i] = flag;
    }
}
