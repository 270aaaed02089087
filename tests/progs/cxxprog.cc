// cxxprog.cc: C++ names for the demangling tests: a namespace, a class
// template, a const member function taking a reference to a vector, an
// operator, and a lambda, each hot for a share of the run; built -O2
// without frame pointers. Runs for the milliseconds given (default 300).
//   cxxprog [MS]
#include <chrono>
#include <cstdlib>
#include <vector>

namespace geo {
namespace detail {
template <typename T> struct Accum {
	T bias;
	__attribute__((noinline)) T run(const std::vector<T> &v) const
	{
		T s = bias;
		for (int k = 0; k < 200; k++)
			for (const T &x : v)
				s += x * x + k;
		return s;
	}
};
} // namespace detail

struct Vec2 {
	double x, y;
};

__attribute__((noinline)) Vec2 operator+(const Vec2 &a, const Vec2 &b)
{
	volatile double s = 0;
	for (int i = 0; i < 20000; i++)
		s = s + a.x * i + b.y;
	return Vec2{a.x + b.x + s * 0, a.y + b.y};
}
} // namespace geo

static double now_ms()
{
	using namespace std::chrono;
	return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

volatile double cxx_sink;

int main(int argc, char **argv)
{
	double end = now_ms() + (argc > 1 ? std::atof(argv[1]) : 300);
	std::vector<double> v(1000, 1.5);
	geo::detail::Accum<double> acc{0.5};
	auto spin = [&](int n) __attribute__((noinline)) {
		double s = 0;
		for (int i = 0; i < n; i++)
			s += i * 0.5;
		return s;
	};

	while (now_ms() < end) {
		cxx_sink += acc.run(v);
		geo::Vec2 a{1, 2}, b{3, 4};
		cxx_sink += (a + b).x;
		cxx_sink += spin(100000);
	}
	return 0;
}
