#include <hubcache/util/hash.hpp>
#include <hubcache/xet/chunker.hpp>

#include "xet_test_data.hpp"

#include <doctest/doctest.h>

#include <array>

using namespace hubcache;
using namespace hubcache::xet;

TEST_SUITE_BEGIN("hubcache::xet::chunker");

namespace xet_chunker_test {

namespace {

std::vector<std::size_t> boundaries_of(const std::vector<Chunk>& chunks)
{
  std::vector<std::size_t> ends;
  for (const auto& chunk : chunks) {
    ends.push_back(chunk.offset + chunk.size);
  }
  return ends;
}

// Chunks `data` fed in blocks of `block_size` bytes.
std::vector<Chunk> chunk_in_blocks(const std::vector<std::uint8_t>& data, std::size_t block_size)
{
  std::vector<Chunk> chunks;
  Chunker chunker;
  auto collect = [&chunks, &data](const Chunk& chunk, Bytes bytes) {
    CHECK(bytes.size() == chunk.size);
    CHECK(std::equal(bytes.begin(), bytes.end(), data.begin() + static_cast<std::ptrdiff_t>(chunk.offset)));
    chunks.push_back(chunk);
  };
  for (std::size_t position = 0; position < data.size(); position += block_size) {
    std::size_t size = std::min(block_size, data.size() - position);
    chunker.update(Bytes(data).subspan(position, size), collect);
  }
  chunker.finish(collect);
  return chunks;
}

// xet-core `get_triggering_base_data(n, padding)`: a 128-byte pattern that triggers a
// boundary, then `padding` zeros, repeated.
std::vector<std::uint8_t> triggering_data(std::size_t size, std::size_t padding)
{
  static constexpr std::array<std::uint8_t, 128> pattern = {
    154, 52,  42,  34,  159, 75,  126, 224, 70,  236, 12,  196, 79,  236, 178, 124, 127, 50,  99,  178, 44,  176,
    174, 126, 250, 235, 205, 174, 252, 122, 35,  10,  20,  101, 214, 69,  193, 8,   115, 105, 158, 228, 120, 111,
    136, 162, 198, 251, 211, 183, 253, 252, 164, 147, 63,  16,  186, 162, 117, 23,  170, 36,  205, 187, 174, 76,
    210, 174, 211, 175, 12,  173, 145, 59,  2,   70,  222, 181, 159, 227, 182, 156, 189, 51,  226, 106, 24,  50,
    183, 157, 140, 10,  8,   23,  212, 70,  10,  234, 23,  33,  219, 254, 39,  236, 70,  49,  191, 116, 9,   115,
    15,  101, 26,  159, 165, 220, 15,  170, 56,  125, 92,  163, 94,  235, 38,  40,  49,  81};
  std::vector<std::uint8_t> data(pattern.begin(), pattern.end());
  data.resize(data.size() + padding, 0);
  while (data.size() < size) {
    std::size_t take = std::min(size - data.size(), data.size());
    data.insert(data.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
  }
  return data;
}

} // namespace

TEST_CASE("constants (spec chunking.md) and the gear table (srijs/rust-gearhash DEFAULT_TABLE)")
{
  CHECK(min_chunk_size == 8 * 1024);
  CHECK(max_chunk_size == 128 * 1024);
  CHECK(boundary_mask == 0xFFFF000000000000ULL);
  CHECK(gear_table[0] == 0xb088d3a9e840f559ULL);
  CHECK(gear_table[1] == 0x5652c7f739ed20d6ULL);
  CHECK(gear_table[255] == 0x63c7a906c1dd187bULL);
}

TEST_CASE("1 MB of SplitMix64 data, seed 0: xet-core boundaries and chunk hashes")
{
  auto data = xet_test::splitmix64_data(1000000, 0);
  // The generator itself (xet-core test_correctness_1mb_random_data; xetchunk-wasm test).
  REQUIRE(data[0] == 175);
  REQUIRE(data[127] == 132);
  REQUIRE(data[111111] == 118);
  std::string text(data.begin(), data.end());
  REQUIRE(util::hex_digest(util::HashAlgorithm::sha256, text)
          == "b3d0a1f7938cd4d8413a4dcffd4313e2e8ac0cb61cb1090eb140ea8e9154befb");

  auto chunks = chunk_bytes(data);
  std::vector<std::size_t> expected = {84493,  134421, 144853, 243318, 271793, 336457, 467529, 494581, 582000, 596735,
                                       616815, 653164, 678202, 724510, 815591, 827760, 958832, 991092, 1000000};
  CHECK(boundaries_of(chunks) == expected);
  std::vector<std::string> expected_hashes = {"6eca1e7dadaf08cca5d82d318c800f07c2ddcec115a7e8627e5edd9605b94b8d",
                                              "624ea34d72a06e5d43a1b8dd10763f0d22f165992c397ed97563899b27fdd88a",
                                              "4411d2ec847c6e3f451a7451ff3933adb4f1c31587421b9f730b698a78313b47",
                                              "6342bde97433e29e0779ad33eb8040d986679040361b3cc3a06230fe60dd6c9b",
                                              "405253fcf15bba751adc4f507d3453273daff81ed4d8acd71c521aa1cbddc0b5",
                                              "4482374af7f8bebfdb5c5df0299f80128d6c58886ad7b218c562b1d74064e4cb",
                                              "80acc8d39c853b4b8a8c6ad7b63bf2ea68f62c2226b92f06349f92cc84d213cc",
                                              "a7076d7d343f711fb20fe6cd023248d8d051e8fe7d44172596cd5c7ea7edaf65",
                                              "44755217bbb4dadc81ea7695765230a34a2e6cb3b55f373f1de35aeba79ae92c",
                                              "001adc1d302d5f039278325dcbd5ec3b194f4794f1629d6f962f9f4bb78a7bff",
                                              "f8460a337c186f07c2e225bb287a1d3d3d686dc69d0828e99640f7d8852c5b90",
                                              "c9bc3da29025dc1ba562d303d815151d9a937367abb766ae842a165e8493d9fe",
                                              "5044339dfd65e8163bdfe642614a6be604b04d6aeacf222cf219ad287bfc5cf1",
                                              "163622db0fe0da93f2ef964eed4c485f3c7a9c312f8e8e8a312ab4bb8141f13e",
                                              "e1730534a858aa0258ad8904ef12b829b8a123a1c611250275c9ca9471e4c650",
                                              "1fbc6854f9185caba1e1f55393f41f83b895b18f9c99245c029025ca48f1e14b",
                                              "8a27b66ccf05b864b6bef6fb5c970fe894f73d2330e8e98fe7841dcdbd9e9576",
                                              "bc70a33e7a9ec820cac24b87023469a57bdae1bf91cc3961b95806c64a525221",
                                              "03e5b5f5a088269ec4b329f1e04debfac4cb54b9c0facf038f7e8e0f054be7e2"};
  REQUIRE(chunks.size() == expected_hashes.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i].hash.hex() == expected_hashes[i]);
  }
}

TEST_CASE("1 MB of one byte value: maximum-size chunks (xet-core test_correctness_1mb_const_data)")
{
  std::vector<std::uint8_t> data(1000000, 59);
  std::vector<std::size_t> expected = {131072, 262144, 393216, 524288, 655360, 786432, 917504, 1000000};
  CHECK(boundaries_of(chunk_bytes(data)) == expected);
}

TEST_CASE("boundaries near the minimum size: xet-core test_correctness_100kb_hitting_data, 128 paddings")
{
  // (data[11111], boundaries before 65536) per padding. A match inside the minimum chunk
  // size is not a boundary: xetchunk-wasm 0.2.0 differs from xet-core there (it cuts at
  // 8191 for padding 1 where xet-core cuts at 8320); xet-core and the spec are followed.
  struct Case {
    std::uint8_t sample;
    std::vector<std::size_t> boundaries;
  };
  static const std::vector<Case> cases = {
    {236, {8256, 16448, 24640, 32832, 41024, 49216, 57408}}, {50, {8320, 16576, 24832, 33088, 41344, 49600, 57856}},
    {36, {8254, 16574, 24894, 33214, 41534, 49854, 58174}},  {116, {8317, 16570, 24823, 33076, 41329, 49582, 57835}},
    {126, {8248, 16564, 24880, 33196, 41512, 49828, 58144}}, {145, {8310, 16556, 24802, 33048, 41294, 49540, 57786}},
    {235, {8238, 16546, 24854, 33162, 41470, 49778, 58086}}, {228, {8299, 16534, 24769, 33004, 41239, 49474, 57709}},
    {70, {8224, 16520, 24816, 33112, 41408, 49704, 58000}},  {178, {8284, 16504, 24724, 32944, 41164, 49384, 57604}},
    {173, {8206, 16486, 24766, 33046, 41326, 49606, 57886}}, {0, {8265, 16466, 24667, 32868, 41069, 49270, 57471}},
    {252, {8324, 16584, 24844, 33104, 41364, 49624, 57884}}, {159, {8242, 16561, 24880, 33199, 41518, 49837, 58156}},
    {69, {8300, 16536, 24772, 33008, 41244, 49480, 57716}},  {219, {8215, 16509, 24803, 33097, 41391, 49685, 57979}},
    {126, {8272, 16480, 24688, 32896, 41104, 49312, 57520}}, {10, {8329, 16594, 24859, 33124, 41389, 49654, 57919}},
    {124, {8240, 16562, 24884, 33206, 41528, 49850, 58172}}, {24, {8296, 16528, 24760, 32992, 41224, 49456, 57688}},
    {196, {8204, 16492, 24780, 33068, 41356, 49644, 57932}}, {106, {8259, 16454, 24649, 32844, 41039, 49234, 57429}},
    {196, {8314, 16564, 24814, 33064, 41314, 49564, 57814}}, {183, {8218, 16523, 24828, 33133, 41438, 49743, 58048}},
    {124, {8272, 16480, 24688, 32896, 41104, 49312, 57520}}, {70, {8326, 16588, 24850, 33112, 41374, 49636, 57898}},
    {126, {8226, 16542, 24858, 33174, 41490, 49806, 58122}}, {191, {8279, 16494, 24709, 32924, 41139, 49354, 57569}},
    {69, {8332, 16600, 24868, 33136, 41404, 49672, 57940}},  {163, {8228, 16549, 24870, 33191, 41512, 49833, 58154}},
    {252, {8280, 16496, 24712, 32928, 41144, 49360, 57576}}, {0, {8332, 16600, 24868, 33136, 41404, 49672, 57940}},
    {173, {8224, 16544, 24864, 33184, 41504, 49824, 58144}}, {42, {8275, 16486, 24697, 32908, 41119, 49330, 57541}},
    {70, {8326, 16588, 24850, 33112, 41374, 49636, 57898}},  {174, {8214, 16527, 24840, 33153, 41466, 49779, 58092}},
    {235, {8264, 16464, 24664, 32864, 41064, 49264, 57464}}, {186, {8314, 16564, 24814, 33064, 41314, 49564, 57814}},
    {0, {8198, 16498, 24798, 33098, 41398, 49698, 57998}},   {157, {8247, 16597, 24947, 33297, 41647, 49997, 58347}},
    {126, {8296, 16528, 24760, 32992, 41224, 49456, 57688}}, {49, {8345, 16626, 24907, 33188, 41469, 49750, 58031}},
    {36, {8224, 16554, 24884, 33214, 41544, 49874, 58204}},  {0, {8272, 16480, 24688, 32896, 41104, 49312, 57520}},
    {236, {8320, 16576, 24832, 33088, 41344, 49600, 57856}}, {105, {8195, 16499, 24803, 33107, 41411, 49715, 58019}},
    {0, {8242, 16594, 24946, 33298, 41650, 50002, 58354}},   {24, {8289, 16514, 24739, 32964, 41189, 49414, 57639}},
    {126, {8336, 16608, 24880, 33152, 41424, 49696, 57968}}, {0, {8206, 16525, 24844, 33163, 41482, 49801, 58120}},
    {70, {8252, 16618, 24984, 33350, 41716, 50082, 58448}},  {236, {8298, 16532, 24766, 33000, 41234, 49468, 57702}},
    {0, {8344, 16624, 24904, 33184, 41464, 49744, 58024}},   {12, {8209, 16535, 24861, 33187, 41513, 49839, 58165}},
    {236, {8254, 16626, 24998, 33370, 41742, 50114, 58486}}, {0, {8299, 16534, 24769, 33004, 41239, 49474, 57709}},
    {173, {8344, 16624, 24904, 33184, 41464, 49744, 58024}}, {196, {8204, 16529, 24854, 33179, 41504, 49829, 58154}},
    {0, {8248, 16618, 24988, 33358, 41728, 50098, 58468}},   {159, {8292, 16520, 24748, 32976, 41204, 49432, 57660}},
    {178, {8336, 16608, 24880, 33152, 41424, 49696, 57968}}, {0, {8380, 16696, 25012, 33328, 41644, 49960, 58276}},
    {10, {8234, 16594, 24954, 33314, 41674, 50034, 58394}},  {101, {8277, 16490, 24703, 32916, 41129, 49342, 57555}},
    {0, {8320, 16576, 24832, 33088, 41344, 49600, 57856}},   {15, {8363, 16662, 24961, 33260, 41559, 49858, 58157}},
    {147, {8212, 16554, 24896, 33238, 41580, 49922, 58264}}, {0, {8254, 16639, 25024, 33409, 41794, 50179, 58564}},
    {0, {8296, 16528, 24760, 32992, 41224, 49456, 57688}},   {227, {8338, 16612, 24886, 33160, 41434, 49708, 57982}},
    {126, {8380, 16696, 25012, 33328, 41644, 49960, 58276}}, {0, {8223, 16581, 24939, 33297, 41655, 50013, 58371}},
    {101, {8264, 16464, 24664, 32864, 41064, 49264, 57464}}, {186, {8305, 16546, 24787, 33028, 41269, 49510, 57751}},
    {52, {8346, 16628, 24910, 33192, 41474, 49756, 58038}},  {0, {8387, 16710, 25033, 33356, 41679, 50002, 58325}},
    {70, {8224, 16588, 24952, 33316, 41680, 50044, 58408}},  {228, {8264, 16464, 24664, 32864, 41064, 49264, 57464}},
    {0, {8304, 16544, 24784, 33024, 41264, 49504, 57744}},   {0, {8344, 16624, 24904, 33184, 41464, 49744, 58024}},
    {50, {8384, 16704, 25024, 33344, 41664, 49984, 58304}},  {214, {8215, 16575, 24935, 33295, 41655, 50015, 58375}},
    {0, {8254, 16654, 25054, 33454, 41854, 50254, 58654}},   {0, {8293, 16522, 24751, 32980, 41209, 49438, 57667}},
    {50, {8332, 16600, 24868, 33136, 41404, 49672, 57940}},  {69, {8371, 16678, 24985, 33292, 41599, 49906, 58213}},
    {0, {8196, 16542, 24888, 33234, 41580, 49926, 58272}},   {0, {8234, 16619, 25004, 33389, 41774, 50159, 58544}},
    {70, {8272, 16480, 24688, 32896, 41104, 49312, 57520}},  {136, {8310, 16556, 24802, 33048, 41294, 49540, 57786}},
    {0, {8348, 16632, 24916, 33200, 41484, 49768, 58052}},   {0, {8386, 16708, 25030, 33352, 41674, 49996, 58318}},
    {101, {8204, 16564, 24924, 33284, 41644, 50004, 58364}}, {36, {8241, 16639, 25037, 33435, 41833, 50231, 58629}},
    {196, {8278, 16492, 24706, 32920, 41134, 49348, 57562}}, {0, {8315, 16566, 24817, 33068, 41319, 49570, 57821}},
    {0, {8352, 16640, 24928, 33216, 41504, 49792, 58080}},   {24, {8389, 16714, 25039, 33364, 41689, 50014, 58339}},
    {8, {8200, 16562, 24924, 33286, 41648, 50010, 58372}},   {0, {8236, 16635, 25034, 33433, 41832, 50231, 58630}},
    {0, {8272, 16480, 24688, 32896, 41104, 49312, 57520}},   {125, {8308, 16552, 24796, 33040, 41284, 49528, 57772}},
    {173, {8344, 16624, 24904, 33184, 41464, 49744, 58024}}, {126, {8380, 16696, 25012, 33328, 41644, 49960, 58276}},
    {0, {8416, 16768, 25120, 33472, 41824, 50176, 58528}},   {0, {8219, 16607, 24995, 33383, 41771, 50159, 58547}},
    {159, {8254, 16678, 25102, 33526, 41950, 50374, 58798}}, {210, {8289, 16514, 24739, 32964, 41189, 49414, 57639}},
    {178, {8324, 16584, 24844, 33104, 41364, 49624, 57884}}, {0, {8359, 16654, 24949, 33244, 41539, 49834, 58129}},
    {0, {8394, 16724, 25054, 33384, 41714, 50044, 58374}},   {170, {8429, 16794, 25159, 33524, 41889, 50254, 58619}},
    {173, {8224, 16624, 25024, 33424, 41824, 50224, 58624}}, {235, {8258, 16452, 24646, 32840, 41034, 49228, 57422}},
    {0, {8292, 16520, 24748, 32976, 41204, 49432, 57660}},   {0, {8326, 16588, 24850, 33112, 41374, 49636, 57898}},
    {0, {8360, 16656, 24952, 33248, 41544, 49840, 58136}},   {24, {8394, 16724, 25054, 33384, 41714, 50044, 58374}},
    {228, {8428, 16792, 25156, 33520, 41884, 50248, 58612}}, {0, {8215, 16613, 25011, 33409, 41807, 50205, 58603}},
    {0, {8248, 16680, 25112, 33544, 41976, 50408, 58840}},   {0, {8281, 16498, 24715, 32932, 41149, 49366, 57583}},
    {101, {8314, 16564, 24814, 33064, 41314, 49564, 57814}}, {174, {8347, 16630, 24913, 33196, 41479, 49762, 58045}},
    {126, {8380, 16696, 25012, 33328, 41644, 49960, 58276}}, {0, {8413, 16762, 25111, 33460, 41809, 50158, 58507}},
    {0, {8192, 16574, 24956, 33338, 41720, 50102, 58484}},   {0, {8224, 16639, 25054, 33469, 41884, 50299, 58714}},
  };
  REQUIRE(cases.size() == 128);
  for (std::size_t padding = 0; padding < cases.size(); ++padding) {
    CAPTURE(padding);
    auto data = triggering_data(65536, padding);
    REQUIRE(data[11111] == cases[padding].sample);
    auto expected = cases[padding].boundaries;
    expected.push_back(65536);
    CHECK(boundaries_of(chunk_bytes(data)) == expected);
  }
}

TEST_CASE("streaming: any block size gives the same chunks (xet-core test_chunk_boundaries)")
{
  auto data = xet_test::splitmix64_data(256000, 1);
  auto reference = chunk_bytes(data);
  for (std::size_t block_size : {1, 37, 255, 8127, 8128, 65536, 131072, 131073, 300000}) {
    CAPTURE(block_size);
    auto chunks = chunk_in_blocks(data, block_size);
    REQUIRE(chunks.size() == reference.size());
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      CHECK(chunks[i].offset == reference[i].offset);
      CHECK(chunks[i].size == reference[i].size);
      CHECK(chunks[i].hash == reference[i].hash);
    }
  }
}

TEST_CASE("chunk sizes: between the minimum and the maximum, except a last shorter one")
{
  auto data = xet_test::splitmix64_data(3 * 1024 * 1024 + 17, 7);
  auto chunks = chunk_bytes(data);
  REQUIRE(chunks.size() > 10);
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    CHECK(chunks[i].offset == offset);
    CHECK(chunks[i].size <= max_chunk_size);
    if (i + 1 < chunks.size()) {
      CHECK(chunks[i].size >= min_chunk_size);
    }
    Bytes bytes = Bytes(data).subspan(offset, chunks[i].size);
    CHECK(chunks[i].hash == chunk_hash(bytes));
    offset += chunks[i].size;
  }
  CHECK(offset == data.size());
}

TEST_CASE("small inputs: none is no chunk, under the minimum is one chunk")
{
  CHECK(chunk_bytes({}).empty());
  auto tiny = xet_test::splitmix64_data(8191, 3);
  auto chunks = chunk_bytes(tiny);
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].size == 8191);
  CHECK(chunks[0].hash == chunk_hash(tiny));
  Chunker chunker;
  int calls = 0;
  chunker.finish([&calls](const Chunk&, Bytes) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("a chunker starts over after finish()")
{
  auto data = xet_test::splitmix64_data(200000, 5);
  Chunker chunker;
  std::vector<Chunk> first;
  std::vector<Chunk> second;
  chunker.update(data, [&first](const Chunk& chunk, Bytes) { first.push_back(chunk); });
  chunker.finish([&first](const Chunk& chunk, Bytes) { first.push_back(chunk); });
  chunker.update(data, [&second](const Chunk& chunk, Bytes) { second.push_back(chunk); });
  chunker.finish([&second](const Chunk& chunk, Bytes) { second.push_back(chunk); });
  REQUIRE(first.size() == second.size());
  CHECK(first.front().offset == 0);
  CHECK(second.front().offset == 0);
  CHECK(first.back().hash == second.back().hash);
}

TEST_SUITE_END();

} // namespace xet_chunker_test
