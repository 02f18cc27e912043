"""Side-by-side benchmark of beanpod against beanstalkd 1.12 (see README.md)."""
