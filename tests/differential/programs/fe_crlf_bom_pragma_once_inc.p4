/* Included twice by fe_crlf_bom_pragma_once.p4: `#pragma once` makes cpp
 * read it once (a second copy would declare h_t again). */
#pragma once
header h_t { bit<8> a; bit<8> b; bit<16> c; }
