// The static executable's entry point (CMakeLists.txt: -e cordon_entry), x86-64 only: before
// the C library's _start, two madvise(2) calls map in one go the pages every run touches.
//
//   MADV_POPULATE_READ   the code a run executes, laid out together by src/startup-order.ld
//                        between __cordon_startup_text_start and __cordon_startup_text_end;
//   MADV_POPULATE_WRITE  the writable segment (relocated data, .data, .bss), which the
//                        static-pie's relocation and the C library's start write at once.
//
// Else each 64 KiB of that code, and each 4 KiB page of that segment, costs a page fault, and
// a fault costs some 14 us on the development VM, where the two calls take about 0.19 and
// 0.07 ms: some 56 faults fewer before the jail's clone (bench/README.md, "Pages mapped at
// entry").
// A kernel without these advice values (before 5.14) returns an error, which is ignored: the
// pages then fault in as before. Under a seccomp filter (a container's, a parent sandbox's,
// cordon inside cordon; PR_GET_SECCOMP says so) neither call is made: a filter may kill a
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
