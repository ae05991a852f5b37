// The static executable's entry point (CMakeLists.txt: -e cordon_entry), x86-64 only: before
// the C library's _start, three madvise(2) calls map in one go the pages every run touches.
//
//   MADV_HUGEPAGE        the 2 MiB of the text that hold the code a run executes (laid out
//                        together by src/startup-order.ld, between __cordon_startup_text_start
//                        and __cordon_startup_text_end, at the start of a text segment that
//                        the link aligns to 2 MiB): a page cache that fills this range from
//                        disk then reads it in one 2 MiB folio, which the kernel maps with one
//                        page-table entry, so one TLB entry covers all of that code;
//   MADV_POPULATE_READ   that code;
//   MADV_POPULATE_WRITE  the writable segment (relocated data, .data, .bss), which the
//                        static-pie's relocation and the C library's start write at once.
//
// Else each 64 KiB of that code, and each 4 KiB page of that segment, costs a page fault, and
// a fault costs some 14 us on the development VM, where the two calls take about 0.19 and
// 0.07 ms: some 56 faults fewer before the jail's clone. On a kernel that runs each system
// call with page-table isolation and without PCIDs (the development VM), every system call
// also empties the TLB, and a run makes hundreds before the jail's clone: with the code on one
// 2 MiB mapping, the walks that refill it after each call are one instead of dozens (about
// 0.5 ms of a 14 ms run; bench/README.md, "The start-up code on one huge page").
// The 2 MiB folio is the page cache's to make: a file read from disk (after boot, or once its
// pages were evicted) is read ahead into it; a file just written by cp(1) keeps the small
// folios its writes made until they are evicted, and a run then maps 4 KiB pages as before.
// This entry point lies outside that range, at the end of the text (its own fault reads ahead
// around it, before the advice is given).
// A kernel without these advice values (before 5.14) returns an error, which is ignored: the
// pages then fault in as before. Under a seccomp filter (a container's, a parent sandbox's,
// cordon inside cordon; PR_GET_SECCOMP says so) no call is made: a filter may kill a
// process for a madvise it does not expect, and cordon ran under such filters before.
//
// Nothing here may need a relocation or the C library: it runs before both. Only the stack
// pointer and %rdx (the function _start registers with atexit) carry anything at entry; a
// system call clobbers %rax, %rcx and %r11, and %rdx is its third argument, so %rdx is kept
// in %r12, which _start does not read.

#if defined(__x86_64__)
__asm__(R"(
    .section .text.cordon_entry,"ax",@progbits
    .globl cordon_entry
    .type cordon_entry,@function
cordon_entry:
    mov %rdx, %r12
    mov $21, %edi                   /* PR_GET_SECCOMP: 0 without a filter */
    mov $157, %eax                  /* SYS_prctl */
    syscall
    test %rax, %rax
    jnz 1f
    lea __cordon_startup_text_start(%rip), %rdi
    and $-2097152, %rdi
    mov $2097152, %esi
    mov $14, %edx                   /* MADV_HUGEPAGE */
    mov $28, %eax                   /* SYS_madvise */
    syscall
    lea __cordon_startup_text_start(%rip), %rdi
    and $-4096, %rdi
    lea __cordon_startup_text_end(%rip), %rsi
    sub %rdi, %rsi
    mov $22, %edx                   /* MADV_POPULATE_READ */
    mov $28, %eax                   /* SYS_madvise */
    syscall
    lea __init_array_start(%rip), %rdi
    and $-4096, %rdi
    lea _end(%rip), %rsi
    sub %rdi, %rsi
    mov $23, %edx                   /* MADV_POPULATE_WRITE */
    mov $28, %eax
    syscall
1:
    mov %r12, %rdx
    jmp _start
    .size cordon_entry, .-cordon_entry
    .text
)");
#endif
