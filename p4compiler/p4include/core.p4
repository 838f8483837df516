/* fabriclab embedded compiler: the P4_16 core library declarations.
 * Written for fabriclab from the P4_16 language specification (appendix
 * "P4 core library"); same names and signatures as the standard core.p4. */
#ifndef _CORE_P4_
#define _CORE_P4_

error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}

extern packet_out {
    void emit<T>(in T hdr);
}

extern void verify(in bool check, in error toSignal);

/// Checked by the compiler (P4_16 1.2.4): a false check is a compile-time error.
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

@noWarn("unused")
action NoAction() {}

match_kind {
    exact,
    ternary,
    lpm
}

#endif
