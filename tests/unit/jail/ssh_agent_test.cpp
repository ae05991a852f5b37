// --ssh-agent's pure parts (cordon/ssh_agent.hpp): the agent messages the relay judges, one
// connection's session bindings, known_hosts(5) (also against ssh-keygen -F on real files), and
// the hashes and base64 the hashed names need.
#include "cordon/ssh_agent.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace cordon::ssh_agent;
namespace fs = std::filesystem;

namespace {

std::string hex(std::string_view s) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (char c : s) {
        out += kDigits[static_cast<uint8_t>(c) >> 4];
        out += kDigits[static_cast<uint8_t>(c) & 0xf];
    }
    return out;
}

std::string u32(uint32_t v) {
    std::string out;
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
    return out;
}

std::string str(std::string_view s) {
    return u32(static_cast<uint32_t>(s.size())) + std::string(s);
}

std::string byte(uint8_t b) {
    return std::string(1, static_cast<char>(b));
}

std::string msg(std::string_view body) {
    return str(body);
}

// An ed25519-shaped key blob whose 32 key bytes are all FILL.
std::string key_blob(char fill) {
    return str("ssh-ed25519") + str(std::string(32, fill));
}

const std::string kUserKey = key_blob('u');
const std::string kOtherUserKey = key_blob('o');
const std::string kGithubKey = key_blob('g');
const std::string kGitlabKey = key_blob('l');
const std::string kStrangerKey = key_blob('s');
const std::string kSid = std::string(32, '\x5a');
const std::string kOtherSid = std::string(32, '\x6b');

Policy policy(std::vector<std::string> identities = {}) {
    return Policy{{{"github.com", kGithubKey}, {"gitlab.example:2222", kGitlabKey}}, std::move(identities)};
}

std::string session_bind(std::string_view hostkey, std::string_view sid, uint8_t forwarding = 0,
                         std::string_view tail = {}) {
    return msg(byte(kExtension) + str(kSessionBind) + str(hostkey) + str(sid) + str("signature") + byte(forwarding) +
               std::string(tail));
}

// RFC 4252 §7's data to sign, for METHOD (a hostbound one carries HOSTKEY).
std::string userauth(std::string_view sid, std::string_view key, std::string_view method = "publickey",
                     std::string_view hostkey = {}, std::string_view service = "ssh-connection",
                     uint8_t sig_follows = 1) {
    std::string d = str(sid) + byte(50) + str("git") + str(service) + str(method) + byte(sig_follows) +
                    str("ssh-ed25519") + str(key);
    if (method == "publickey-hostbound-v00@openssh.com") d += str(hostkey);
    return d;
}

std::string sign(std::string_view key, std::string_view data, uint32_t flags = 0) {
    return msg(byte(kSignRequest) + str(key) + str(data) + u32(flags));
}

const std::string kSuccessReply = msg(byte(kSuccess));

// A WHY the relay may print: one short line of printable ASCII.
bool printable_line(const std::string& why) {
    return !why.empty() && why.size() <= 200 &&
           std::all_of(why.begin(), why.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// CONN with SID bound to github.com's key, through the session-bind and its SUCCESS.
void bind_session(const Policy& p, Connection& conn, std::string_view hostkey, std::string_view sid) {
    const Verdict v = judge_request(p, conn, session_bind(hostkey, sid));
    REQUIRE(v.forward);
    REQUIRE(conn.pending);
    std::string why;
    REQUIRE(judge_reply(p, conn, kExtension, kSuccessReply, why) == kSuccessReply);
    REQUIRE(why.empty());
    REQUIRE_FALSE(conn.pending);
}

}  // namespace

TEST_CASE("ssh agent: SHA-1 and HMAC-SHA1 give the RFCs' test vectors", "[ssh-agent]") {
    // RFC 3174 §7.3, and lengths around the padding's block edges.
    CHECK(hex(sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
    CHECK(hex(sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    CHECK(hex(sha1(std::string(1000000, 'a'))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    CHECK(hex(sha1("")) == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    CHECK(hex(sha1(std::string(55, 'a'))) == "c1c8bbdc22796e28c0e15163d20899b65621d65a");
    CHECK(hex(sha1(std::string(56, 'a'))) == "c2db330f6083854c99d4b5bfb6e8f29f201be699");
    CHECK(hex(sha1(std::string(64, 'a'))) == "0098ba824b5c16427bd7a1122a5a442a25ec644d");
    CHECK(hex(sha1(std::string(119, 'a'))) == "ee971065aaa017e0632a8ca6c77bb3bf8b1dfc56");
    // RFC 2202 §3, all seven.
    std::string k4;
    for (char c = 1; c <= 25; ++c) k4 += c;
    CHECK(hex(hmac_sha1(std::string(20, '\x0b'), "Hi There")) == "b617318655057264e28bc0b6fb378c8ef146be00");
    CHECK(hex(hmac_sha1("Jefe", "what do ya want for nothing?")) == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
    CHECK(hex(hmac_sha1(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
          "125d7342b9ac11cd91a39af48aa17b4f63f175d3");
    CHECK(hex(hmac_sha1(k4, std::string(50, '\xcd'))) == "4c9007f4026250c6bc8414f9bf50c86c2d7235da");
    CHECK(hex(hmac_sha1(std::string(20, '\x0c'), "Test With Truncation")) ==
          "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04");
    CHECK(hex(hmac_sha1(std::string(80, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
          "aa4ae5e15272d00e95705637ce8a3b55ed402112");
    CHECK(hex(hmac_sha1(std::string(80, '\xaa'),
                        "Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data")) ==
          "e8e99d0f45237d786d6bbaa7965c7808bbff1a91");
}

TEST_CASE("ssh agent: base64 is RFC 4648's, padded and canonical", "[ssh-agent]") {
    const std::vector<std::pair<std::string, std::string>> vectors = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        CHECK(base64_encode(plain) == encoded);
        CHECK(base64_decode(encoded) == plain);
    }
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (size_t n = 0; n <= all.size(); n += 37) {
        const auto part = all.substr(all.size() - n);
        CHECK(base64_decode(base64_encode(part)) == part);
    }
    CHECK(base64_encode("\xfb\xff") == "+/8=");
    // Unpadded, misplaced padding, bits past the last byte, blanks, the URL alphabet, NUL.
    for (const char* bad : {"Zg", "Zg=", "Zm9vYg", "Z===", "====", "Zg==Zg==", "=Zm9", "Zh==", "Zm9=", "Zm 9v",
                            "Zm9v\n", "Zm-v", "Zm_v", "Zm9v====", "Zm8=\r"}) {
        INFO(bad);
        CHECK_FALSE(base64_decode(bad));
    }
    CHECK_FALSE(base64_decode(std::string("Zm\0v", 4)));
}

TEST_CASE("ssh agent: framing", "[ssh-agent]") {
    CHECK(frame_length("", 100) == size_t{0});
    CHECK(frame_length(std::string("\0\0\0", 3), 100) == size_t{0});
    CHECK(frame_length(u32(5) + "abcd", 100) == size_t{0});
    CHECK(frame_length(u32(5) + "abcde", 100) == size_t{9});
    CHECK(frame_length(u32(5) + "abcde" + u32(1), 100) == size_t{9});  // the first message only
    CHECK(frame_length(u32(100) + std::string(100, 'x'), 100) == size_t{104});
    // Too long or empty: known from the prefix alone, before the body arrives.
    CHECK_FALSE(frame_length(u32(101), 100));
    CHECK_FALSE(frame_length(u32(0), 100));
    CHECK_FALSE(frame_length(u32(0) + "x", 100));
    CHECK_FALSE(frame_length(u32(0xffffffff), kMaxReply));
    CHECK_FALSE(frame_length(u32(kMaxRequest + 1), kMaxRequest));
    CHECK(frame_length(u32(kMaxRequest), kMaxRequest) == size_t{0});
    CHECK(failure_message() == std::string("\0\0\0\1\5", 5));
    CHECK(frame_length(failure_message(), kMaxReply) == size_t{5});
}

TEST_CASE("ssh agent: requests that change, lock or use the agent otherwise are refused", "[ssh-agent]") {
    const Policy p = policy();
    const std::vector<std::pair<uint8_t, std::string>> named = {
        {17, "adding keys is refused"},
        {25, "adding keys is refused"},
        {18, "removing keys is refused"},
        {19, "removing keys is refused"},
        {20, "adding smartcard keys is refused"},
        {26, "adding smartcard keys is refused"},
        {21, "removing smartcard keys is refused"},
        {22, "locking the agent is refused"},
        {23, "unlocking the agent is refused"},
        // SSH1's, the agent's own answers, and numbers no one uses.
        {1, "message 1 is refused"},
        {3, "message 3 is refused"},
        {7, "message 7 is refused"},
        {8, "message 8 is refused"},
        {9, "message 9 is refused"},
        {24, "message 24 is refused"},
        {0, "message 0 is refused"},
        {kFailure, "message 5 is refused"},
        {kSuccess, "message 6 is refused"},
        {kIdentitiesAnswer, "message 12 is refused"},
        {kSignResponse, "message 14 is refused"},
        {kExtensionFailure, "message 28 is refused"},
        {255, "message 255 is refused"},
    };
    for (const auto& [type, why] : named) {
        Connection conn;
        const Verdict v = judge_request(p, conn, msg(byte(type) + str("\x1b[31mpayload") + "\xff\n"));
        INFO(int{type});
        CHECK_FALSE(v.forward);
        CHECK(v.type == type);
        CHECK(v.why == why);
    }
    Connection conn;
    // Extensions other than session-bind: named when the name is a plain one, cut short.
    CHECK(judge_request(p, conn, msg(byte(kExtension) + str("query"))).why == "the extension query is refused");
    CHECK(judge_request(p, conn, msg(byte(kExtension) + str("ecdh@joyent.com") + str("x"))).why ==
          "the extension ecdh@joyent.com is refused");
    CHECK(judge_request(p, conn, msg(byte(kExtension) + str("bad\nname\x1b[0m"))).why == "the extension is refused");
    CHECK(judge_request(p, conn, msg(byte(kExtension) + str(""))).why == "the extension is refused");
    CHECK(judge_request(p, conn, msg(byte(kExtension) + str(std::string(300, 'x')))).why ==
          "the extension " + std::string(64, 'x') + " is refused");
    CHECK(judge_request(p, conn, msg(byte(kExtension) + u32(9) + "abc")).why == "the request is malformed");
    // Listing keys is forwarded; with anything after the number it is malformed.
    const Verdict list = judge_request(p, conn, msg(byte(kRequestIdentities)));
    CHECK(list.forward);
    CHECK(list.type == kRequestIdentities);
    CHECK(list.why.empty());
    CHECK(judge_request(p, conn, msg(byte(kRequestIdentities) + "x")).why == "the request is malformed");
    // What is not one whole message: its prefix disagrees with its size, or it has no body.
    CHECK(judge_request(p, conn, u32(9) + byte(kRequestIdentities)).why == "the request is malformed");
    CHECK(judge_request(p, conn, msg(byte(kRequestIdentities)) + "x").why == "the request is malformed");
    const Verdict empty = judge_request(p, conn, u32(0));
    CHECK_FALSE(empty.forward);
    CHECK(empty.type == 0);
    CHECK_FALSE(judge_request(p, conn, "").forward);
    CHECK(conn.bindings.empty());
    CHECK_FALSE(conn.pending);
}

TEST_CASE("ssh agent: a session bound to an allowed host's key signs its login, and only it", "[ssh-agent]") {
    const Policy p = policy();
    Connection conn;
    // Not bound yet: no signature, whatever the data.
    Verdict v = judge_request(p, conn, sign(kUserKey, userauth(kSid, kUserKey)));
    CHECK_FALSE(v.forward);
    CHECK(v.type == kSignRequest);
    CHECK(v.why ==
          "signing is refused: the session is not bound to a host (OpenSSH 8.9 or later binds it; ssh-keygen -Y "
          "sign and other non-login signatures are refused)");

    v = judge_request(p, conn, session_bind(kGithubKey, kSid));
    CHECK(v.forward);
    CHECK(v.type == kExtension);
    REQUIRE(conn.pending);
    CHECK(conn.pending->host == "github.com");
    CHECK(conn.pending->hostkey == kGithubKey);
    CHECK(conn.pending->session_id == kSid);
    CHECK(conn.bindings.empty());  // until the caller's agent accepts the host's signature
    std::string why;
    CHECK(judge_reply(p, conn, kExtension, kSuccessReply, why) == kSuccessReply);
    CHECK(why.empty());
    CHECK_FALSE(conn.pending);
    REQUIRE(conn.bindings.size() == 1);
    CHECK(conn.bindings[0].host == "github.com");
    CHECK(conn.bindings[0].session_id == kSid);

    // The login of that session, plain and hostbound, with any flags.
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(kSid, kUserKey))).forward);
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(kSid, kUserKey), 4)).forward);
    const auto hostbound = [](std::string_view sid, std::string_view hostkey) {
        return userauth(sid, kUserKey, "publickey-hostbound-v00@openssh.com", hostkey);
    };
    CHECK(judge_request(p, conn, sign(kUserKey, hostbound(kSid, kGithubKey))).forward);

    // Another session, another host's key in a hostbound login, another key than the one to sign with.
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(kOtherSid, kUserKey))).why ==
          "signing is refused: the session is not bound to a host (OpenSSH 8.9 or later binds it; ssh-keygen -Y "
          "sign and other non-login signatures are refused)");
    CHECK(judge_request(p, conn, sign(kUserKey, hostbound(kSid, kStrangerKey))).why ==
          "signing is refused: the session is bound to github.com, whose key is not the host key the login "
          "request names");
    CHECK(judge_request(p, conn, sign(kUserKey, hostbound(kSid, kGitlabKey))).why ==
          "signing is refused: the session is bound to github.com, whose key is not the host key the login "
          "request names");
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(kSid, kOtherUserKey))).why ==
          "signing is refused: the login request names another key");

    // Data that is no login request of the bound session's shape.
    const std::string not_login =
        "signing is refused: the data is not an SSH login request (ssh-keygen -Y sign and other non-login "
        "signatures are refused)";
    const std::vector<std::string> not_logins = {
        "SSHSIG" + str("file") + str("") + str("sha512") + str(std::string(64, 'h')),
        "",
        userauth(kSid, kUserKey) + "x",
        userauth(kSid, kUserKey, "publickey", {}, "ssh-userauth"),
        userauth(kSid, kUserKey, "publickey", {}, "ssh-connection", 0),
        userauth(kSid, kUserKey, "publickey", {}, "ssh-connection", 2),
        userauth(kSid, kUserKey, "password"),
        userauth(kSid, kUserKey, "publickey-hostbound-v00@openssh.com", kGithubKey) + "x",
        userauth("", kUserKey),
        userauth(kSid, kUserKey).substr(0, 60),
        str(kSid) + byte(51) + userauth(kSid, kUserKey).substr(kSid.size() + 5),
    };
    for (const auto& data : not_logins) {
        INFO(hex(data));
        const Verdict nv = judge_request(p, conn, sign(kUserKey, data));
        CHECK_FALSE(nv.forward);
        CHECK(nv.why == not_login);
    }
    // The sign request itself malformed: trailing bytes, no flags, no key.
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(kSid, kUserKey)) + "").forward);
    CHECK(judge_request(p, conn, msg(byte(kSignRequest) + str(kUserKey) + str(userauth(kSid, kUserKey)) + u32(0) + "x"))
              .why == "the request is malformed");
    CHECK(judge_request(p, conn, msg(byte(kSignRequest) + str(kUserKey) + str(userauth(kSid, kUserKey)))).why ==
          "the request is malformed");
    CHECK(judge_request(p, conn, msg(byte(kSignRequest) + str("") + str(userauth(kSid, kUserKey)) + u32(0))).why ==
          "the request is malformed");
    CHECK(conn.bindings.size() == 1);
}

TEST_CASE("ssh agent: --ssh-agent-key narrows the keys that sign and are listed", "[ssh-agent]") {
    const Policy p = policy({kUserKey});
    Connection conn;
    bind_session(p, conn, kGithubKey, kSid);
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(kSid, kUserKey))).forward);
    const Verdict v = judge_request(p, conn, sign(kOtherUserKey, userauth(kSid, kOtherUserKey)));
    CHECK_FALSE(v.forward);
    CHECK(v.why == "the key is not one --ssh-agent-key allows");

    // The answer keeps the allowed keys, comments and order, re-encoded to the byte.
    const std::string k3 = str("ecdsa-sha2-nistp256") + str("nistp256") + str(std::string(65, '\x04'));
    const Policy two = policy({kUserKey, k3});
    const std::string answer = msg(byte(kIdentitiesAnswer) + u32(3) + str(kUserKey) + str("me@laptop") +
                                   str(kOtherUserKey) + str("other") + str(k3) + str(""));
    std::string why;
    CHECK(judge_reply(two, conn, kRequestIdentities, answer, why) ==
          msg(byte(kIdentitiesAnswer) + u32(2) + str(kUserKey) + str("me@laptop") + str(k3) + str("")));
    CHECK(why.empty());
    CHECK(judge_reply(policy({kStrangerKey}), conn, kRequestIdentities, answer, why) ==
          msg(byte(kIdentitiesAnswer) + u32(0)));
    // No --ssh-agent-key: every key, as the agent sent them.
    CHECK(judge_reply(policy(), conn, kRequestIdentities, answer, why) == answer);
    CHECK(judge_reply(policy(), conn, kRequestIdentities, msg(byte(kIdentitiesAnswer) + u32(0)), why) ==
          msg(byte(kIdentitiesAnswer) + u32(0)));
    CHECK(why.empty());
}

TEST_CASE("ssh agent: session-bind refusals", "[ssh-agent]") {
    const Policy p = policy();
    Connection conn;
    CHECK(judge_request(p, conn, session_bind(kStrangerKey, kSid)).why ==
          "the host key is not an allowed host's (--ssh-agent)");
    {
        // ssh -A: the forwarded connection's first bind says so; what follows on it is the
        // other host's (its own bind, not marked, and its logins), and is refused whole.
        constexpr std::string_view kForwarding = "forwarding the agent further is refused (ssh -A)";
        for (const uint8_t flag : {1, 7}) {
            Connection fwd;
            CHECK(judge_request(p, fwd, session_bind(kGithubKey, kSid, flag)).why == kForwarding);
            CHECK(fwd.forwarded);
            CHECK(judge_request(p, fwd, session_bind(kGithubKey, kOtherSid)).why == kForwarding);
            CHECK_FALSE(fwd.pending);
            CHECK(judge_request(p, fwd, sign(kUserKey, userauth(kOtherSid, kUserKey))).why == kForwarding);
            CHECK(judge_request(p, fwd, msg(byte(kRequestIdentities))).forward);
        }
    }
    for (const auto& bad : {session_bind(kGithubKey, kSid, 0, "x"), session_bind(kGithubKey, ""),
                            session_bind(kGithubKey, std::string(129, 's')), session_bind("", kSid),
                            session_bind(kGithubKey, kSid).substr(0, 60)}) {
        // A message cut short is given a prefix of its own size, to reach the extension's parser.
        const std::string whole = bad.size() == 60 ? msg(bad.substr(4)) : bad;
        const Verdict v = judge_request(p, conn, whole);
        CHECK_FALSE(v.forward);
        CHECK(v.type == kExtension);
        CHECK(v.why == "the session-bind is malformed");
    }
    CHECK_FALSE(conn.pending);
    CHECK(conn.bindings.empty());

    // One at a time: a second session-bind before the first one's answer is refused.
    CHECK(judge_request(p, conn, session_bind(kGithubKey, kSid)).forward);
    CHECK(judge_request(p, conn, session_bind(kGitlabKey, kOtherSid)).why ==
          "a session-bind already awaits the agent's answer");
    REQUIRE(conn.pending);
    CHECK(conn.pending->session_id == kSid);

    // The agent's refusal (of the host's signature), malformed answers: no binding, none pending.
    for (const auto& reply : {msg(byte(kFailure)), msg(byte(kExtensionFailure)), msg(byte(kSuccess) + "x"),
                              u32(2) + byte(kSuccess), std::string("\0\0\0", 3), msg(byte(kSignResponse))}) {
        if (!conn.pending) REQUIRE(judge_request(p, conn, session_bind(kGithubKey, kSid)).forward);
        std::string why;
        CHECK(judge_reply(p, conn, kExtension, reply, why) == failure_message());
        CHECK(printable_line(why));
        CHECK_FALSE(conn.pending);
        CHECK(conn.bindings.empty());
    }
    std::string why;
    CHECK(judge_reply(p, conn, kExtension, msg(byte(kFailure)), why) == failure_message());
    CHECK(why == "no session-bind awaits an answer");
    REQUIRE(judge_request(p, conn, session_bind(kGithubKey, kSid)).forward);
    CHECK(judge_reply(p, conn, kExtension, msg(byte(kExtensionFailure)), why) == failure_message());
    CHECK(why == "the caller's agent did not accept the host key's signature");
}

TEST_CASE("ssh agent: one connection binds at most kMaxBindings sessions", "[ssh-agent]") {
    const Policy p = policy();
    Connection conn;
    for (size_t i = 0; i < kMaxBindings; ++i)
        bind_session(p, conn, i % 2 ? kGitlabKey : kGithubKey, std::string(32, 'a' + i));
    CHECK(conn.bindings.size() == kMaxBindings);
    CHECK(conn.bindings[1].host == "gitlab.example:2222");
    const Verdict v = judge_request(p, conn, session_bind(kGithubKey, std::string(32, 'z')));
    CHECK_FALSE(v.forward);
    CHECK(v.why == "too many sessions are bound on one agent connection");
    CHECK_FALSE(conn.pending);
    // Each bound session still signs its login.
    CHECK(judge_request(p, conn, sign(kUserKey, userauth(std::string(32, 'a'), kUserKey))).forward);
    CHECK(judge_request(p, conn,
                        sign(kUserKey, userauth(std::string(32, 'b'), kUserKey, "publickey-hostbound-v00@openssh.com",
                                                kGitlabKey)))
              .forward);

    Connection again;
    bind_session(p, again, kGithubKey, kSid);
    // The same session to the same host again (OpenSSH's agent answers it, records nothing new).
    bind_session(p, again, kGithubKey, kSid);
    CHECK(again.bindings.size() == 1);
    // The same session to another host: refused.
    CHECK(judge_request(p, again, session_bind(kGitlabKey, kSid)).why == "the session is already bound to github.com");
}

TEST_CASE("ssh agent: the agent's answers the jail gets", "[ssh-agent]") {
    const Policy p = policy();
    Connection conn;
    std::string why;
    const std::string signature = msg(byte(kSignResponse) + str(str("ssh-ed25519") + str(std::string(64, 'S'))));
    CHECK(judge_reply(p, conn, kSignRequest, signature, why) == signature);
    CHECK(why.empty());
    // The agent's own failure: failure, and nothing of cordon's to say.
    CHECK(judge_reply(p, conn, kSignRequest, msg(byte(kFailure)), why) == failure_message());
    CHECK(why.empty());
    CHECK(judge_reply(p, conn, kRequestIdentities, msg(byte(kFailure)), why) == failure_message());
    CHECK(why.empty());
    // Malformed, or of the wrong number.
    const std::vector<std::pair<uint8_t, std::string>> bad = {
        {kSignRequest, signature + "x"},
        {kSignRequest, msg(byte(kSignResponse) + str("sig") + "x")},
        {kSignRequest, msg(byte(kSignResponse) + u32(10) + "sig")},
        {kSignRequest, msg(byte(kIdentitiesAnswer) + u32(0))},
        {kSignRequest, msg(byte(kSuccess))},
        {kSignRequest, msg(byte(kFailure) + "x")},
        {kSignRequest, u32(0)},
        {kSignRequest, ""},
        {kRequestIdentities, signature},
        {kRequestIdentities, msg(byte(kIdentitiesAnswer))},
        {kRequestIdentities, msg(byte(kIdentitiesAnswer) + u32(2) + str(kUserKey) + str("c"))},
        {kRequestIdentities, msg(byte(kIdentitiesAnswer) + u32(1) + str(kUserKey) + str("c") + "x")},
        {kRequestIdentities, msg(byte(kIdentitiesAnswer) + u32(1) + str(kUserKey))},
        {kRequestIdentities, msg(byte(kIdentitiesAnswer) + u32(0xffffffff) + str(kUserKey) + str("c"))},
        {kRequestIdentities,
         msg(byte(kIdentitiesAnswer) + u32(kMaxIdentities + 1) + std::string((kMaxIdentities + 1) * 8, '\0'))},
    };
    for (const auto& [type, reply] : bad) {
        INFO(hex(reply));
        CHECK(judge_reply(p, conn, type, reply, why) == failure_message());
        CHECK(why == "the agent's answer is malformed");
    }
    // kMaxIdentities empty keys are fine.
    const std::string most = msg(byte(kIdentitiesAnswer) + u32(kMaxIdentities) + std::string(kMaxIdentities * 8, '\0'));
    CHECK(judge_reply(p, conn, kRequestIdentities, most, why) == most);
    // An answer to what was never forwarded.
    CHECK(judge_reply(p, conn, 17, kSuccessReply, why) == failure_message());
    CHECK(why == "no request of message 17 was forwarded");
    CHECK(conn.bindings.empty());
}

TEST_CASE("ssh agent: key texts and public key lines", "[ssh-agent]") {
    const std::string text = "ssh-ed25519 " + base64_encode(kUserKey);
    CHECK(key_text(kUserKey) == text);
    CHECK(parse_public_key(text) == kUserKey);
    CHECK(parse_public_key(text + " me@laptop\n") == kUserKey);
    CHECK(parse_public_key(" \t" + text + "\tme with spaces \r\n") == kUserKey);
    CHECK(parse_public_key(key_text(key_text(kUserKey).empty() ? "" : kGithubKey)) == kGithubKey);
    // The type must be the blob's; the base64 strict; one line; no options in front.
    CHECK_FALSE(parse_public_key("ssh-rsa " + base64_encode(kUserKey)));
    CHECK_FALSE(parse_public_key("ssh-ed25519 " + base64_encode(kUserKey).substr(1)));
    CHECK_FALSE(parse_public_key("ssh-ed25519"));
    CHECK_FALSE(parse_public_key("ssh-ed25519 "));
    CHECK_FALSE(parse_public_key(""));
    CHECK_FALSE(parse_public_key(text + "\n" + text));
    CHECK_FALSE(parse_public_key("restrict " + text));
    CHECK_FALSE(parse_public_key("ssh-ed25519 " + base64_encode("\0\0\0\x0bssh-ed2")));
    // What is no key blob has no text.
    CHECK(key_text("").empty());
    CHECK(key_text(u32(5) + "ab").empty());
    CHECK(key_text(str("")).empty());
    CHECK(key_text(str("ssh ed25519") + "x").empty());
    CHECK(key_text(str("ssh-\ned25519")).empty());
    CHECK(key_text(str("x")) == "x " + base64_encode(str("x")));
}

TEST_CASE("ssh agent: known_hosts lines as ssh reads them", "[ssh-agent]") {
    const auto line = [](std::string_view hosts, const std::string& blob, std::string_view marker = {}) {
        return std::string(marker) + (marker.empty() ? "" : " ") + std::string(hosts) + " " + key_text(blob) +
               " comment\n";
    };
    const std::string k1 = key_blob('1');
    const std::string k2 = key_blob('2');
    const std::string k3 = key_blob('3');
    const std::string k4 = key_blob('4');
    using Keys = std::vector<std::string>;

    CHECK(known_host_keys(line("example.com", k1), "example.com", 22) == Keys{k1});
    CHECK(known_host_keys(line("example.com", k1), "example.com", 2222).empty());
    CHECK(known_host_keys(line("[example.com]:2222", k1), "example.com", 2222) == Keys{k1});
    CHECK(known_host_keys(line("[example.com]:2222", k1), "example.com", 22).empty());
    CHECK(known_host_keys(line("EXAMPLE.com", k1), "example.com", 22) == Keys{k1});
    CHECK(known_host_keys(line("other,example.com", k1), "example.com", 22) == Keys{k1});
    CHECK(known_host_keys(line("*.example.com", k1), "a.b.example.com", 22) == Keys{k1});
    CHECK(known_host_keys(line("*.example.com", k1), "example.com", 22).empty());
    CHECK(known_host_keys(line("h?.example.com", k1), "h1.example.com", 22) == Keys{k1});
    CHECK(known_host_keys(line("h?.example.com", k1), "h12.example.com", 22).empty());
    CHECK(known_host_keys(line("*", k1), "anything", 2222) == Keys{k1});
    CHECK(known_host_keys(line("*.example.com,!bad.example.com", k1), "bad.example.com", 22).empty());
    CHECK(known_host_keys(line("!bad.example.com,*.example.com", k1), "bad.example.com", 22).empty());
    CHECK(known_host_keys(line("!bad.example.com", k1), "good.example.com", 22).empty());
    CHECK(known_host_keys(line("[*.example.com]:*", k1), "a.example.com", 443) == Keys{k1});
    // A pattern as long as ssh's buffer makes the whole list fail, even an earlier match.
    CHECK(known_host_keys(line("example.com," + std::string(1023, '*'), k1), "example.com", 22).empty());
    CHECK(known_host_keys(line("example.com," + std::string(1022, '*'), k1), "example.com", 22) == Keys{k1});

    // Hashed names: "|1|" salt "|" HMAC-SHA1(salt, name).
    const std::string salt(20, '\x42');
    const auto hashed = [&](std::string_view name) {
        return "|1|" + base64_encode(salt) + "|" + base64_encode(hmac_sha1(salt, name));
    };
    CHECK(known_host_keys(line(hashed("example.com"), k1), "example.com", 22) == Keys{k1});
    CHECK(known_host_keys(line(hashed("[example.com]:2222"), k1), "example.com", 2222) == Keys{k1});
    CHECK(known_host_keys(line(hashed("example.com"), k1), "example.org", 22).empty());
    CHECK(known_host_keys(line(hashed("example.com") + ",example.org", k1), "example.org", 22).empty());
    CHECK(known_host_keys(line("|1|" + base64_encode(std::string(19, 'x')) + "|" +
                                   base64_encode(hmac_sha1(std::string(19, 'x'), "example.com")),
                               k1),
                          "example.com", 22)
              .empty());
    CHECK(known_host_keys(line("|2|" + hashed("example.com").substr(3), k1), "example.com", 22).empty());

    // Markers: @revoked takes its key away from every line; @cert-authority's key is no host key.
    const std::string file = line("example.com", k1) + line("example.com", k2) + line("*", k2, "@revoked") +
                             line("example.com", k3, "@cert-authority") + line("other.com", k4, "@revoked") +
                             line("example.com", k4);
    CHECK(known_host_keys(file, "example.com", 22) == Keys{k1, k4});
    CHECK(known_host_keys(file, "other.com", 22).empty());
    CHECK(known_host_keys(line("example.com", k1, "@unknown") + line("example.com", k2, "@revoked @revoked") +
                              line("example.com", k3, "@revoked\t@cert-authority"),
                          "example.com", 22)
              .empty());

    // Each key once, in file order; blanks, comments, CRLF and broken lines pass.
    const std::string messy = "\n# example.com " + key_text(k4) + "\n   \n" + line("example.com", k2) + "\t" +
                              line("example.com", k1) + "example.com " + key_text(k3) + "\r\n" +
                              line("example.com,x", k2) + "example.com\n" + "example.com ssh-ed25519\n" +
                              "example.com ssh-ed25519 !!!!\n" + "example.com ssh-rsa " + base64_encode(k4) + "\n" +
                              "example.com " + key_text(k4).substr(0, 41) + "\n" + "example.com #" + key_text(k4) +
                              "\n" + "example.com ssh-ed25519 " + base64_encode(k4) + "=\n" + "example.com " +
                              key_text(k4) + std::string("\0", 1) + "\n" + "example.com\t\t" + key_text(k2);
    // A line ends at a NUL, as ssh reads it: the key before it counts.
    CHECK(known_host_keys(messy, "example.com", 22) == Keys{k2, k1, k3, k4});
    CHECK(known_host_keys(messy, "EXAMPLE.COM", 22) == Keys{k2, k1, k3, k4});

    // The key's base64 may hold \r, \v and \f, which ssh's decoder skips: such a @revoked
    // line revokes too.
    for (const char* ws : {"\v", "\f", "\r", "\r\r"}) {
        std::string text = key_text(k1);
        text.insert(text.size() - 10, ws);
        CHECK(known_host_keys(line("example.com", k1) + "@revoked * " + text + " c\n", "example.com", 22).empty());
        CHECK(known_host_keys("example.com " + text + "\n", "example.com", 22) == Keys{k1});
    }
    CHECK(
        known_host_keys(line("example.com", k1) + "@revoked * " + key_text(k1) + "\r\r\n", "example.com", 22).empty());

    // Lines of any length are read, so that a long @revoked line still revokes.
    const std::string head = "example.com " + key_text(k1) + " ";
    const std::string long_line = head + std::string(size_t{64} * 1024, 'c') + "\n";
    CHECK(known_host_keys(long_line + line("example.com", k2), "example.com", 22) == Keys{k1, k2});
    std::string many_hosts;
    for (int i = 0; i < 3000; ++i) many_hosts += "host" + std::to_string(i) + ".example,";
    CHECK(known_host_keys(line("example.com", k1) + "@revoked " + many_hosts + "* " + key_text(k1) + "\n",
                          "example.com", 22)
              .empty());
    CHECK(known_host_keys(line("example.com", k1) + "@revoked * " + key_text(k1) + std::string(" c\0x", 4) + "\n",
                          "example.com", 22)
              .empty());
    CHECK(known_host_keys("", "example.com", 22).empty());
}

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char templ[] = "/tmp/cordon-ssh-agent-test.XXXXXX";
        REQUIRE(::mkdtemp(templ) != nullptr);
        path = templ;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] std::string at(const std::string& name) const { return path + "/" + name; }
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string run(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
    return out;
}

std::vector<std::string> words(std::string_view line) {
    std::vector<std::string> out;
    std::istringstream in{std::string(line)};
    std::string w;
    while (in >> w) out.push_back(w);
    return out;
}

// The host keys ssh-keygen -F prints for NAME, as "TYPE BASE64": @cert-authority lines left
// out, @revoked lines' keys taken away, each once in file order.
std::vector<std::string> ssh_keygen_keys(const std::string& file, const std::string& name) {
    const std::string out = run("ssh-keygen -F '" + name + "' -f '" + file + "' 2>/dev/null");
    std::vector<std::string> keys;
    std::set<std::string> revoked;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        auto w = words(line);
        if (w.empty() || w[0][0] == '#') continue;
        std::string marker;
        if (w[0][0] == '@') {
            marker = w[0];
            w.erase(w.begin());
        }
        REQUIRE(w.size() >= 3);
        const std::string key = w[1] + " " + w[2];
        if (marker == "@cert-authority") continue;
        if (marker == "@revoked") {
            revoked.insert(key);
        } else if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
            keys.push_back(key);
        }
    }
    keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const std::string& k) { return revoked.count(k) != 0; }),
               keys.end());
    return keys;
}

}  // namespace

TEST_CASE("ssh agent: known_hosts lookups agree with ssh-keygen -F", "[ssh-agent]") {
    if (std::system("command -v ssh-keygen >/dev/null 2>&1") != 0)
        FAIL("ssh-keygen not found: openssh-client is a test dependency (apt-get install openssh-client)");
    TempDir dir;
    std::vector<std::string> k;  // "TYPE BASE64" of each generated host key
    for (int i = 0; i < 6; ++i) {
        const std::string f = dir.at("k" + std::to_string(i));
        const std::string type = i == 5 ? "ecdsa -b 256" : "ed25519";
        REQUIRE(std::system(("ssh-keygen -q -t " + type + " -N '' -C k" + std::to_string(i) + " -f '" + f +
                             "' </dev/null >/dev/null 2>&1")
                                .c_str()) == 0);
        const std::string pub = slurp(f + ".pub");
        const auto blob = parse_public_key(pub);
        REQUIRE(blob);
        k.push_back(key_text(*blob));
        CHECK(pub.rfind(k.back() + " k" + std::to_string(i), 0) == 0);
    }
    const std::string plain =
        "# known hosts\n"
        "example.com,192.0.2.1 " +
        k[0] +
        " plain\n"
        "[example.com]:2222 " +
        k[1] +
        "\n"
        "*.wild.test,!bad.wild.test " +
        k[2] +
        "\n"
        "a.wild.test " +
        k[5] +
        "\n"
        "@revoked *.wild.test " +
        k[5] +
        "\n"
        "h?.q.test " +
        k[3] +
        "\n"
        "MiXeD.Case.Test\t" +
        k[4] +
        "\n"
        "revoked.test " +
        k[0] +
        "\n"
        "revoked.test " +
        k[3] +
        "\n"
        "revoked.test " +
        k[0] +
        "\n"
        "@revoked revoked.test,other.test " +
        k[3] +
        "\n"
        "@cert-authority *.ca.test " +
        k[4] +
        "\n"
        "x.ca.test " +
        k[1] +
        "\n"
        "[*.wild.test]:* " +
        k[4] +
        "\n"
        "   \n";
    std::ofstream(dir.at("hashed")) << "hashme.test " << k[0] << "\n[hashme.test]:2200 " << k[1]
                                    << "\nhashme.test,198.51.100.7 " << k[2] << "\n";
    REQUIRE(std::system(("ssh-keygen -q -H -f '" + dir.at("hashed") + "' >/dev/null 2>&1").c_str()) == 0);
    const std::string hashed = slurp(dir.at("hashed"));
    REQUIRE(hashed.find("|1|") != std::string::npos);
    REQUIRE(hashed.find("hashme") == std::string::npos);
    const std::string file = dir.at("known_hosts");
    std::ofstream(file) << plain << hashed;
    const std::string text = slurp(file);

    const std::vector<std::pair<std::string, uint16_t>> names = {
        {"example.com", 22},   {"192.0.2.1", 22},     {"example.com", 2222},   {"example.com", 2200},
        {"a.wild.test", 22},   {"bad.wild.test", 22}, {"x.bad.wild.test", 22}, {"a.wild.test", 2022},
        {"h1.q.test", 22},     {"h12.q.test", 22},    {"mixed.case.test", 22}, {"revoked.test", 22},
        {"other.test", 22},    {"x.ca.test", 22},     {"y.ca.test", 22},       {"hashme.test", 22},
        {"hashme.test", 2200}, {"198.51.100.7", 22},  {"hashme.test", 2222},   {"nothing.test", 22},
    };
    size_t found = 0;
    for (const auto& [host, port] : names) {
        const std::string name = port == 22 ? host : "[" + host + "]:" + std::to_string(port);
        INFO(name);
        std::vector<std::string> ours;
        for (const auto& blob : known_host_keys(text, host, port)) ours.push_back(key_text(blob));
        const auto theirs = ssh_keygen_keys(file, name);
        CHECK(ours == theirs);
        found += theirs.empty() ? 0 : 1;
    }
    // The comparison is worth something only if ssh-keygen found keys for most names.
    CHECK(found >= 12);
    using Texts = std::vector<std::string>;
    const auto texts = [&](std::string_view host, uint16_t port) {
        Texts out;
        for (const auto& blob : known_host_keys(text, host, port)) out.push_back(key_text(blob));
        return out;
    };
    CHECK(texts("example.com", 22) == Texts{k[0]});
    CHECK(texts("a.wild.test", 22) == Texts{k[2]});
    CHECK(texts("revoked.test", 22) == Texts{k[0]});
    CHECK(texts("hashme.test", 22) == Texts{k[0], k[2]});
    CHECK(texts("hashme.test", 2200) == Texts{k[1]});
    CHECK(texts("x.ca.test", 22) == Texts{k[1]});
}
