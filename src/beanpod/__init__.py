"""beanpod: a fast, durable work-queue server speaking the beanstalkd protocol."""

__version__ = "0.1.0"
