from setuptools import setup

setup(name="fixbase", version="1.0.0", packages=["fixbase"])
